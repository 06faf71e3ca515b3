#include "launcher/lifecycle/capture_log.h"

#include <cstdio>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/safe_files.h"

namespace asbx {

UniqueFd open_capture_log(const std::string& path) {
  ReplacingFile file(path, 0600);  // its directory reached without the agent's symlinks (base/dir_walk.h)
  if (file.fd() < 0 || !file.put_in_place()) throw Error(ErrorKind::usage, "--capture-log: " + file.why());
  int fd = file.release();
  std::fputs((path + "\n").c_str(), stdout);  // the caller's contract: the path, once LOG exists
  std::fflush(stdout);
  return UniqueFd(fd);
}

}  // namespace asbx
