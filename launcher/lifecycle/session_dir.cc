#include "launcher/lifecycle/session_dir.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace asbx {
namespace {

constexpr int kTakeWaitMs = 10000;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

UniqueFd open_dir(const std::string& dir) {
  return UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// flock, polled: a holder stopped with the lock held costs a bounded wait, never a hang.
bool lock_within(int fd, int wait_ms) {
  std::int64_t until = now_ms() + wait_ms;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (now_ms() >= until) return errno = EWOULDBLOCK, false;
    ::usleep(2000);
  }
  return true;
}

// The locked fd still names DIR: it was not removed (or removed and made again) while this waited.
bool still_there(int fd, const std::string& dir) {
  struct stat held{}, now{};
  return ::fstat(fd, &held) == 0 && held.st_nlink > 0 && ::lstat(dir.c_str(), &now) == 0 &&
         held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

}  // namespace

bool SessionDirLock::take(const std::string& dir) {
  std::int64_t until = now_ms() + kTakeWaitMs;
  for (;;) {
    fd_ = UniqueFd();
    made_ = ::mkdir(dir.c_str(), 0700) == 0;
    if (!made_ && errno != EEXIST) return false;
    fd_ = open_dir(dir);
    if (!fd_ && errno != ENOENT) return false;  // ENOENT: removed since; made again
    if (fd_ && !lock_within(fd_.get(), static_cast<int>(std::max<std::int64_t>(0, until - now_ms())))) return false;
    if (fd_ && still_there(fd_.get(), dir)) return true;
    if (now_ms() >= until) return errno = EWOULDBLOCK, false;
  }
}

bool with_session_dir_locked(const std::string& dir, int wait_ms, const std::function<void()>& fn) {
  UniqueFd fd = open_dir(dir);
  if (!fd || !lock_within(fd.get(), wait_ms) || !still_there(fd.get(), dir)) return false;
  fn();
  return true;
}

}  // namespace asbx
