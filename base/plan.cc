#include "base/plan.h"

#include <algorithm>

namespace asbx {

bool Mount::read_only() const { return std::find(options.begin(), options.end(), "ro") != options.end(); }

Mount session_ca_mount() {
  return {"tmpfs", "tmpfs", kSessionCaDir, {"rw", "size=64k", "nosuid", "nodev", "noexec", "mode=0755"}};
}

}  // namespace asbx
