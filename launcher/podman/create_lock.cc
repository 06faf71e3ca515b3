#include "launcher/podman/create_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/error.h"
#include "base/dir_walk.h"

namespace asbx {

CreateLock::CreateLock(const std::string& dir, long wait_ms) {
  std::string file = dir + "/.create.lock";
  std::string why;
  UniqueFd at = open_dir_path(dir, true, why);  // made as needed, never through a planted symlink
  if (!at) throw Error(ErrorKind::create_failed, "cannot create " + dir + " for the create lock: " + why);
  fd_ = ::openat(at.get(), ".create.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) throw Error(ErrorKind::create_failed, "cannot open the create lock " + file + ": " + std::strerror(errno));
  for (long waited = 0; waited <= wait_ms; waited += 10) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int err = errno;
      ::close(fd_);
      throw Error(ErrorKind::create_failed, "cannot lock the create lock " + file + ": " + std::strerror(err));
    }
    ::usleep(10 * 1000);
  }
  ::close(fd_);
  throw Error(ErrorKind::create_failed, "another session held the create lock " + file + " for " +
                                            std::to_string(wait_ms / 1000) + " s");
}

CreateLock::~CreateLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace asbx
