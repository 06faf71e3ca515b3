#include "base/dir_walk.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace asbx {
namespace {

constexpr int kMaxLinks = 40;  // as many as the kernel's own walk follows

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> out;
  for (std::size_t at = 0; at <= path.size();) {
    std::size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(at, slash - at);
    if (!part.empty() && part != ".") out.push_back(part);
    at = slash + 1;
  }
  return out;
}

UniqueFd open_root() { return UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)); }

// One component below `dir`; a symlink there fails with ELOOP (or ENOTDIR), never followed.
int open_component(int dir, const std::string& name) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    long fd = ::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) return static_cast<int>(fd);  // EAGAIN: a rename raced; retry
  }
}

// Root made it, in a directory only root may change: the system's layout, not a session's.
bool system_link(int dir, const struct stat& link) {
  struct stat d{};
  return link.st_uid == 0 && ::fstat(dir, &d) == 0 && d.st_uid == 0 && (d.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::string child(const std::string& shown, const std::string& name) {
  if (name == "..") {
    auto slash = shown.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : shown.substr(0, slash);
  }
  return (shown == "/" ? "" : shown) + "/" + name;
}

class Walk {
 public:
  Walk(const std::string& absolute, bool create) : dir_(open_root()), left_(components(absolute)), create_(create) {}

  UniqueFd run(std::string& why) {
    if (!dir_) why = std::string("cannot open '/': ") + std::strerror(errno);
    while (dir_ && !left_.empty() && step()) {
    }
    if (!why_.empty()) why = why_;
    return why.empty() ? std::move(dir_) : UniqueFd();
  }

 private:
  bool step() {
    std::string name = left_.front();
    left_.pop_front();
    std::string here = child(shown_, name);
    UniqueFd next(open_component(dir_.get(), name));
    if (!next && errno == ENOENT && create_ && name != "..") {
      if (::mkdirat(dir_.get(), name.c_str(), 0700) != 0 && errno != EEXIST)
        return fail("cannot make '" + here + "': " + std::strerror(errno));
      next = UniqueFd(open_component(dir_.get(), name));
    }
    if (next) {
      dir_ = std::move(next);
      shown_ = here;
      return true;
    }
    int err = errno;
    struct stat st{};
    if ((err == ELOOP || err == ENOTDIR) && ::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
      return follow(name, here, st);
    return fail("cannot open '" + here + "': " + std::strerror(err));
  }

  bool follow(const std::string& name, const std::string& here, const struct stat& st) {
    if (!system_link(dir_.get(), st)) return fail("'" + here + "' is a symlink (refused)");
    if (++links_ > kMaxLinks) return fail("'" + here + "': too many levels of symlinks");
    char target[PATH_MAX];
    ssize_t n = ::readlinkat(dir_.get(), name.c_str(), target, sizeof target);
    if (n <= 0 || n >= static_cast<ssize_t>(sizeof target)) return fail("cannot read the symlink '" + here + "'");
    std::string to(target, static_cast<std::size_t>(n));
    std::deque<std::string> more = components(to);
    left_.insert(left_.begin(), more.begin(), more.end());
    if (to[0] == '/') {
      dir_ = open_root();
      shown_ = "/";
    }
    return static_cast<bool>(dir_) || fail("cannot open '/'");
  }

  bool fail(const std::string& why) {
    why_ = why;
    return false;
  }

  UniqueFd dir_;
  std::string shown_ = "/";  // the directory reached so far, for messages
  std::deque<std::string> left_;
  bool create_;
  int links_ = 0;
  std::string why_;
};

}  // namespace

UniqueFd open_dir_path(const std::string& path, bool create, std::string& why) {
  std::string absolute = path;
  if (absolute.empty() || absolute[0] != '/') {
    char* cwd = ::getcwd(nullptr, 0);  // physical: the kernel's own name of the directory
    if (!cwd) {
      why = std::string("cannot tell the working directory: ") + std::strerror(errno);
      return UniqueFd();
    }
    absolute = std::string(cwd) + "/" + path;
    std::free(cwd);
  }
  why.clear();
  return Walk(absolute, create).run(why);
}

UniqueFd open_parent_dir(const std::string& path, bool create, std::string& name, std::string& why) {
  auto slash = path.rfind('/');
  name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    why = "'" + path + "' names no file";
    return UniqueFd();
  }
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return open_dir_path(dir, create, why);
}

}  // namespace asbx
