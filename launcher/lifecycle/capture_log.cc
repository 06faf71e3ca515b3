#include "launcher/lifecycle/capture_log.h"

#include <cstdio>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/safe_files.h"

namespace asbx {

UniqueFd open_capture_log(const std::string& path) {
  std::string tmp, why;
  int fd = create_beside(path, 0600, tmp, why);
  if (fd >= 0 && !replace_with(tmp, path, why)) {
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) throw Error(ErrorKind::usage, "--capture-log: " + why);
  std::fputs((path + "\n").c_str(), stdout);  // the caller's contract: the path, once LOG exists
  std::fflush(stdout);
  return UniqueFd(fd);
}

}  // namespace asbx
