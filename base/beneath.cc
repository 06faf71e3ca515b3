#include "base/beneath.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fdio.h"

namespace asbx {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

int open_under(int dirfd, const std::string& path, int flags, bool in_root, bool no_symlinks, mode_t mode) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = (in_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) | RESOLVE_NO_MAGICLINKS;
  if (no_symlinks) how.resolve |= RESOLVE_NO_SYMLINKS;
  std::string rel = path;
  while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);  // "inside the root" is relative to it
  if (rel.empty()) rel = ".";
  for (;;) {
    long fd = ::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) return static_cast<int>(fd);  // EAGAIN: a rename raced; retry
  }
}

int open_beneath(int dirfd, const std::string& relative, int flags, mode_t mode) {
  open_how how{};
  // RESOLVE_NO_SYMLINKS refuses a link anywhere, the last component too (ELOOP); O_NOFOLLOW
  // is left out for O_PATH, where it would hand back the link itself instead.
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOFOLLOW));
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  const char* path = relative.empty() ? "." : relative.c_str();
  for (;;) {
    long fd = ::syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) return static_cast<int>(fd);  // EAGAIN: a rename raced; retry
  }
}


std::string write_new_file(int dirfd, const std::string& relative, const std::string& data, mode_t mode, bool chown,
                           unsigned uid, unsigned gid) {
  UniqueFd dir(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  std::size_t at = 0;
  for (auto slash = relative.find('/'); slash != std::string::npos; slash = relative.find('/', at)) {
    std::string part = relative.substr(at, slash - at);
    at = slash + 1;
    if (part.empty()) continue;
    if (::mkdirat(dir.get(), part.c_str(), 0700) == 0 && chown &&
        ::fchownat(dir.get(), part.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
      return "cannot hand '" + part + "' to the container user: " + std::strerror(errno);
    UniqueFd next(open_under(dir.get(), part, O_PATH | O_DIRECTORY, false, true));
    if (!next) return "cannot enter '" + part + "': " + std::strerror(errno);
    dir = std::move(next);
  }
  UniqueFd file(open_under(dir.get(), relative.substr(at), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, false, true, mode));
  if (!file) return std::string("cannot create it: ") + std::strerror(errno);
  if (!write_all(file.get(), data)) return std::string("cannot write it: ") + std::strerror(errno);
  if (chown && ::fchown(file.get(), uid, gid) != 0) return std::string("cannot hand it over: ") + std::strerror(errno);
  return "";
}

std::uint64_t content_digest(const std::string& data) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::optional<std::string> read_file_beneath(int dirfd, const std::string& relative, std::int64_t max_bytes) {
  UniqueFd fd(open_beneath(dirfd, relative, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > max_bytes) return std::nullopt;
  std::string data;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    data.append(buf, static_cast<std::size_t>(n));
    if (static_cast<std::int64_t>(data.size()) > max_bytes) return std::nullopt;
  }
  return data;
}

std::optional<std::uint64_t> digest_file_under(int dirfd, const std::string& relative, std::int64_t max_bytes) {
  UniqueFd fd(open_under(dirfd, relative, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY, false, true));
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > max_bytes) return std::nullopt;
  std::string data;
  char buf[8192];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) > 0;) {
    data.append(buf, static_cast<std::size_t>(n));
    if (static_cast<std::int64_t>(data.size()) > max_bytes) return std::nullopt;
  }
  return content_digest(data);
}

}  // namespace asbx
