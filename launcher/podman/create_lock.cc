#include "launcher/podman/create_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"

namespace asbx {

CreateLock::CreateLock(const std::string& dir, long wait_ms) {
  std::string file = dir + "/.create.lock";
  std::string part;
  if (!make_dirs(dir, &part))
    throw Error(ErrorKind::create_failed, "cannot create " + part + " for the create lock: " + std::strerror(errno));
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
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
