#include "launcher/lifecycle/safe_files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir_walk.h"

namespace asbx {
namespace {

std::string random_suffix() {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return "";
  char hex[17];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  return hex;
}

std::string os_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// `why` of a file opened without following a symlink: what the caller reads in a warning.
std::string refusal_of_owned(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return os_error("cannot stat it");
  if (!S_ISREG(st.st_mode)) return "it is not a regular file (refused)";
  if (st.st_nlink != 1) return "it has " + std::to_string(st.st_nlink) + " hard links (refused)";
  if (st.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by the launcher's uid " +
           std::to_string(::geteuid()) + " (refused)";
  return "";
}

}  // namespace

ReplacingFile::ReplacingFile(const std::string& path, mode_t mode) : path_(path) {
  dir_ = open_parent_dir(path, false, name_, why_);
  if (!dir_) return;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string suffix = random_suffix();
    if (suffix.empty()) {
      why_ = os_error("getrandom");
      return;
    }
    tmp_ = name_ + ".tmp." + suffix;
    fd_ = UniqueFd(::openat(dir_.get(), tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (fd_) return;
    if (errno != EEXIST) break;
  }
  why_ = os_error("cannot open '" + path + "'");
  tmp_.clear();
}

ReplacingFile::~ReplacingFile() {
  if (!tmp_.empty() && !placed_) ::unlinkat(dir_.get(), tmp_.c_str(), 0);
}

bool ReplacingFile::put_in_place() {
  if (!fd_ && why_.empty()) why_ = "it was not created";
  if (!why_.empty()) return false;
  if (::renameat(dir_.get(), tmp_.c_str(), dir_.get(), name_.c_str()) != 0) {
    why_ = os_error("cannot put it at '" + path_ + "'");
    return false;
  }
  placed_ = true;
  return true;
}

int ReplacingFile::release() { return fd_.release(); }

int open_append_owned(const std::string& path, bool make_parents, std::string& why) {
  std::string name;
  UniqueFd dir = open_parent_dir(path, make_parents, name, why);
  if (!dir) return -1;
  int fd = ::openat(dir.get(), name.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                    0600);
  if (fd < 0) {
    why = errno == ELOOP ? "it is a symlink (refused)" : std::strerror(errno);
    return -1;
  }
  why = refusal_of_owned(fd);
  if (!why.empty()) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);  // blocking again: it is a regular file
  return fd;
}

}  // namespace asbx
