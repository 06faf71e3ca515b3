#include "launcher/lifecycle/runtime_dir.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/error.h"

namespace asbx {
namespace {

[[noreturn]] void refuse(const SeatConfig& seat, const std::string& why) {
  std::string from = seat.path.empty() ? "the default" : "from " + seat.path;
  throw Error(ErrorKind::config, "runtime_dir '" + seat.runtime_dir + "' (" + from + ") " + why +
                                     ": session dirs and gc's markers live there; nothing was started");
}

std::string octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace

void check_runtime_dir(const SeatConfig& seat) {
  if (seat.runtime_dir.empty()) return;
  UniqueFd fd(::open(seat.runtime_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd && errno == ENOENT) return;  // whoever needs it first makes it, 0700 (base/dir_walk.h)
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0) refuse(seat, std::string("cannot be opened as a directory: ") + std::strerror(errno));
  if (st.st_uid != ::geteuid())
    refuse(seat, "is owned by uid " + std::to_string(st.st_uid) + ", not by the launcher's user (uid " +
                     std::to_string(::geteuid()) + ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    refuse(seat, "is writable by group or others (mode " + octal(st.st_mode) + "): chmod go-w it, or name another");
}

}  // namespace asbx
