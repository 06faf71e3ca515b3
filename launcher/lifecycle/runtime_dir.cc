#include "launcher/lifecycle/runtime_dir.h"

#include <algorithm>
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

std::string component_problem(const std::string& path, const struct stat& st, bool last) {
  uid_t me = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != me) return path + " is owned by uid " + std::to_string(st.st_uid);
  if (last && st.st_uid != me) return path + " is not this user's";
  bool others_write = st.st_mode & (S_IWGRP | S_IWOTH);
  if (others_write && (last || !(st.st_mode & S_ISVTX))) return path + " may be written by others (mode " + octal(st.st_mode) + ")";
  return "";
}

}  // namespace

UniqueFd open_trusted_dir(const std::string& given, std::string& why) {
  std::string dir = given;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  why = "'" + dir + "' is not an absolute path without '..'";
  if (dir.empty() || dir[0] != '/' || dir.find("/../") != std::string::npos || (dir.size() >= 3 && dir.compare(dir.size() - 3, 3, "/..") == 0))
    return UniqueFd();
  why = "";
  UniqueFd at(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string walked;
  for (std::size_t from = 1, to; from <= dir.size(); from = to + 1) {
    to = std::min(dir.find('/', from), dir.size());
    std::string part = dir.substr(from, to - from);
    if (part.empty() || part == ".") continue;
    walked += "/" + part;
    UniqueFd next(::openat(at.get(), part.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
    struct stat st{};
    if (!next) why = errno == ENOENT ? "" : walked + (errno == ENOTDIR ? " is a link or not a directory" : std::string(": ") + std::strerror(errno));
    else if (::fstat(next.get(), &st) != 0) why = walked + ": " + std::strerror(errno);
    else why = component_problem(walked, st, to >= dir.size());
    if (!next || !why.empty()) return UniqueFd();
    at = std::move(next);
  }
  return at;
}

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
