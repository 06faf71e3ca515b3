#include "launcher/slots.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/error.h"

namespace asbx {
namespace {

void make_dirs(const std::string& dir) {
  for (std::size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
    std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      throw Error(ErrorKind::internal, "cannot create slot directory " + part + ": " + std::strerror(errno));
    if (at == std::string::npos) return;
  }
}

}  // namespace

SlotClaim::SlotClaim(const std::string& dir, int slots) {
  make_dirs(dir);
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
