#include "launcher/gitguard/walk.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/beneath.h"
#include "launcher/lifecycle/pump.h"

namespace asbx {
namespace {

void walk_dir(int dirfd, const std::string& path, int depth, WalkBudget& budget,
              const std::function<bool(const WalkEntry&)>& visit) {
  int listing = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  DIR* dir = listing >= 0 ? ::fdopendir(listing) : nullptr;
  if (!dir) {
    if (listing >= 0) ::close(listing);
    return;
  }
  while (dirent* d = ::readdir(dir)) {
    std::string name = d->d_name;
    if (name == "." || name == "..") continue;
    if (budget.spent(path)) break;
    ++budget.entries;
    WalkEntry e{dirfd, name, path + "/" + name, {}, depth};
    if (::fstatat(dirfd, name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (!visit(e) || !S_ISDIR(e.st.st_mode)) continue;
    if (depth + 1 >= budget.max_depth) {
      if (budget.stopped.empty()) budget.stopped = "'" + e.path + "' is deeper than " + std::to_string(budget.max_depth) + " levels: not walked";
      continue;
    }
    UniqueFd child(open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK));
    struct stat now{};
    if (!child || ::fstat(child.get(), &now) != 0 || now.st_ino != e.st.st_ino || now.st_dev != e.st.st_dev) continue;
    walk_dir(child.get(), e.path, depth + 1, budget, visit);
  }
  ::closedir(dir);
}

}  // namespace

bool WalkBudget::spent(const std::string& where) {
  if (!stopped.empty()) return true;
  if (entries >= max_entries) stopped = "more than " + std::to_string(max_entries) + " entries (stopped in '" + where + "')";
  else if (deadline_ms > 0 && (entries & 1023) == 0 && steady_ms() > deadline_ms)
    stopped = "the time allowed ran out (stopped in '" + where + "')";
  return !stopped.empty();
}

void walk_beneath(int root_fd, const std::string& label, WalkBudget& budget,
                  const std::function<bool(const WalkEntry&)>& visit) {
  UniqueFd root(open_beneath(root_fd, "", O_RDONLY | O_DIRECTORY | O_NONBLOCK));
  if (root) walk_dir(root.get(), label, 0, budget, visit);
}

std::string special_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
  return "";
}

std::string strip_setid(int dirfd, const std::string& name, const struct stat& seen) {
  UniqueFd fd(open_beneath(dirfd, name, O_PATH));
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0) return std::string("cannot open it: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode) || st.st_ino != seen.st_ino || st.st_dev != seen.st_dev) return "it was replaced meanwhile";
  // fchmod needs a readable fd; the agent may have left the file unreadable (mode 4000): the
  // O_PATH fd through /proc/self/fd reaches the very inode without a path the agent controls.
  std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
  if (::chmod(proc.c_str(), st.st_mode & 01777) != 0)
    return std::string("chmod failed: ") + std::strerror(errno);
  return "";
}

}  // namespace asbx
