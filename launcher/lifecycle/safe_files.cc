#include "launcher/lifecycle/safe_files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace

int create_beside(const std::string& path, mode_t mode, std::string& tmp, std::string& why) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string suffix = random_suffix();
    if (suffix.empty()) {
      why = os_error("getrandom");
      return -1;
    }
    tmp = path + ".tmp." + suffix;
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) return fd;
    if (errno != EEXIST) break;
  }
  why = os_error("cannot open '" + path + "'");
  return -1;
}

bool replace_with(const std::string& tmp, const std::string& path, std::string& why) {
  if (::rename(tmp.c_str(), path.c_str()) == 0) return true;
  why = os_error("cannot put it at '" + path + "'");
  ::unlink(tmp.c_str());
  return false;
}

int open_append_owned(const std::string& path, std::string& why) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = errno == ELOOP ? "it is a symlink (refused)" : std::strerror(errno);
    return -1;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0) why = os_error("cannot stat it");
  else if (!S_ISREG(st.st_mode)) why = "it is not a regular file (refused)";
  else if (st.st_nlink != 1) why = "it has " + std::to_string(st.st_nlink) + " hard links (refused)";
  else if (st.st_uid != ::geteuid())
    why = "it is owned by uid " + std::to_string(st.st_uid) + ", not by the launcher's uid " +
          std::to_string(::geteuid()) + " (refused)";
  if (!why.empty()) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);  // blocking again: it is a regular file
  return fd;
}

}  // namespace asbx
