#include "launcher/lifecycle/slots.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"

namespace asbx {
namespace {

void make_slot_dir(const std::string& dir) {
  std::string part;
  if (!make_dirs(dir, &part))
    throw Error(ErrorKind::internal, "cannot create slot directory " + part + ": " + std::strerror(errno));
}

}  // namespace

SlotClaim::SlotClaim(const std::string& dir, int slots) {
  make_slot_dir(dir);
  for (int i = 0; i < slots; ++i) {
    std::string file = dir + "/" + std::to_string(i) + ".lock";
    int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
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
