#include "launcher/lifecycle/seccomp_file.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "base/dir_walk.h"
#include "base/error.h"
#include "base/fdio.h"
#include "launcher/lifecycle/safe_files.h"

namespace asbx {

void write_seccomp_profile(const SeccompPlan& seccomp) {
  if (seccomp.path.empty())
    throw Error(ErrorKind::seccomp_unavailable, "the plan names no seccomp profile (its facts named no podman default); nothing was created");
  std::string name, why;
  UniqueFd dir = open_parent_dir(seccomp.path, true, name, why);  // the runtime dir, made 0700 if missing
  if (dir) {
    ReplacingFile file(seccomp.path, 0644);
    bool ok = file.fd() >= 0 && write_all(file.fd(), seccomp.text) && ::fsync(file.fd()) == 0;
    why = file.fd() < 0 ? file.why() : ok ? "" : std::string("cannot write it: ") + std::strerror(errno);
    if (ok && file.put_in_place()) return;
    if (ok) why = file.why();
  }
  throw Error(ErrorKind::seccomp_unavailable, "cannot write the session's seccomp profile " + seccomp.path + ": " + why +
                                                  "; nothing was created");
}

void remove_seccomp_profile(const SeccompPlan& seccomp) {
  if (!seccomp.path.empty()) ::unlink(seccomp.path.c_str());
}

}  // namespace asbx
