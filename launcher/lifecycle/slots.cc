#include "launcher/lifecycle/slots.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/dir_walk.h"

namespace asbx {
namespace {

// Made as needed, never through a planted symlink (base/dir_walk.h); the slot files are opened
// beneath the fd it returns.
UniqueFd make_slot_dir(const std::string& dir) {
  std::string why;
  UniqueFd fd = open_dir_path(dir, true, why);
  if (!fd) throw Error(ErrorKind::internal, "cannot create slot directory " + dir + ": " + why);
  return fd;
}

}  // namespace

SlotClaim::SlotClaim(const std::string& dir, int slots) {
  UniqueFd at = make_slot_dir(dir);
  for (int i = 0; i < slots; ++i) {
    std::string name = std::to_string(i) + ".lock", file = dir + "/" + name;
    int fd = ::openat(at.get(), name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw Error(ErrorKind::internal, "cannot open slot file " + file + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      slot_ = i;
      return;
    }
    ::close(fd);
  }
  throw Error(ErrorKind::seat_full, "seat full: all " + std::to_string(slots) + " slots in " + dir + " are taken");
}

SlotClaim::~SlotClaim() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace asbx
