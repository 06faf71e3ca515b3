#include "seccomp/masked_paths.h"

namespace asbx {

const std::vector<MaskedPath>& kernel_paths_masked() {
  static const std::vector<MaskedPath> rows = {
      {"/proc/key-users", "every host uid's key count and bytes (a side channel on the seat's keyrings)"},
      {"/proc/config.gz", "the seat kernel's full build configuration: which exploit paths are compiled in"},
      {"/sys/kernel/notes", "the seat kernel's build id: which exact kernel (and its offsets) runs"},
  };
  return rows;
}

}  // namespace asbx
