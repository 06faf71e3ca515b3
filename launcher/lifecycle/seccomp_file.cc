#include "launcher/lifecycle/seccomp_file.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir_walk.h"
#include "base/error.h"
#include "base/fdio.h"
#include "base/util.h"
#include "launcher/lifecycle/safe_files.h"

namespace asbx {

UniqueFd write_seccomp_profile(const SeccompPlan& seccomp) {
  if (seccomp.path.empty())
    throw Error(ErrorKind::seccomp_unavailable, "the plan names no seccomp profile (its facts named no podman default); nothing was created");
  std::string name, why;
  UniqueFd dir = open_parent_dir(seccomp.path, true, name, why);  // the runtime dir, made 0700 if missing
  if (dir) {
    ReplacingFile file(seccomp.path, 0644);
    bool ok = file.fd() >= 0 && ::flock(file.fd(), LOCK_EX | LOCK_NB) == 0 && write_all(file.fd(), seccomp.text) &&
              ::fsync(file.fd()) == 0;
    why = file.fd() < 0 ? file.why() : ok ? "" : std::string("cannot write it: ") + std::strerror(errno);
    if (ok && file.put_in_place()) return UniqueFd(file.release());
    if (ok) why = file.why();
  }
  throw Error(ErrorKind::seccomp_unavailable, "cannot write the session's seccomp profile " + seccomp.path + ": " + why +
                                                  "; nothing was created");
}

void remove_seccomp_profile(const SeccompPlan& seccomp) {
  if (!seccomp.path.empty()) ::unlink(seccomp.path.c_str());
}

namespace {

bool profile_name(const std::string& name) {
  bool json = name.size() > 13 && name.compare(name.size() - 5, 5, ".json") == 0;
  return starts_with(name, "seccomp-") && (json || name.find(".json.tmp.") != std::string::npos);
}

// Unlinked only while this holds its lock and the name still leads to it.
bool remove_if_stale(int dir, const std::string& name, std::int64_t now_unix) {
  struct stat st {}, again {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
      st.st_mtim.tv_sec > now_unix - kStaleProfileSeconds)
    return false;
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return false;  // a live launcher holds it
  if (::fstat(fd.get(), &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) return false;
  return ::unlinkat(dir, name.c_str(), 0) == 0;
}

}  // namespace

std::vector<std::string> collect_stale_profiles(const std::string& runtime_dir, std::int64_t now_unix) {
  std::vector<std::string> removed;
  int fd = ::open(runtime_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return removed;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return removed;
  }
  while (dirent* e = ::readdir(d))
    if (profile_name(e->d_name) && remove_if_stale(::dirfd(d), e->d_name, now_unix)) removed.push_back(e->d_name);
  ::closedir(d);
  return removed;
}

}  // namespace asbx
