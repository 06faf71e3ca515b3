#include "launcher/gitguard/walk.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include "base/beneath.h"
#include "launcher/lifecycle/pump.h"

namespace asbx {
namespace {

// One open directory of the walk: an explicit stack, at most max_depth deep.
struct Frame {
  DIR* dir;
  std::string path;
  int depth;  // of its entries
};

class Walker {
 public:
  Walker(const WalkLimits& limits, const WalkEvents& events) : limits_(limits), events_(events) {}
  ~Walker() {
    for (auto& f : stack_) ::closedir(f.dir);
  }

  WalkOutcome run(int root_fd, const std::string& label) {
    UniqueFd root(open_beneath(root_fd, "", O_RDONLY | O_DIRECTORY | O_NONBLOCK));
    if (!root || !push(root.release(), label, 0)) {
      out_.unfinished = "'" + label + "' could not be opened: " + std::strerror(errno);
      return out_;
    }
    while (!stack_.empty()) {
      if (hard_stop()) {
        out_.unfinished = "'" + stack_.back().path + "' and what was left beneath the directories open above it";
        break;
      }
      Frame& f = stack_.back();
      errno = 0;
      dirent* d = ::readdir(f.dir);
      if (!d) {
        ::closedir(f.dir);
        stack_.pop_back();
        continue;
      }
      std::string name = d->d_name;
      if (name != "." && name != "..") entry(f, name);
    }
    return out_;
  }

 private:
  bool push(int fd, const std::string& path, int depth) {
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
      ::close(fd);
      return false;
    }
    stack_.push_back({dir, path, depth});
    return true;
  }

  void entry(const Frame& f, const std::string& name) {
    ++out_.entries;
    int dirfd = ::dirfd(f.dir);
    WalkEntry e{dirfd, name, f.path + "/" + name, {}, f.depth};
    if (::fstatat(dirfd, name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) return;  // gone meanwhile
    if (!events_.visit(e) || !S_ISDIR(e.st.st_mode)) return;
    if (std::string why = limit(e); !why.empty()) {
      events_.set_aside(e, why);
      return;
    }
    UniqueFd child(open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK));
    struct stat now{};
    if (!child || ::fstat(child.get(), &now) != 0 || now.st_ino != e.st.st_ino || now.st_dev != e.st.st_dev) {
      events_.set_aside(e, "it could not be opened as the directory seen");
      return;
    }
    push(child.release(), e.path, f.depth + 1);  // by value: `f` may move when the stack grows
  }

  // Why the directory `e` is not entered ("" = it is).
  std::string limit(const WalkEntry& e) {
    if (e.depth + 1 >= limits_.max_depth) return "deeper than " + std::to_string(limits_.max_depth) + " levels";
    if (spent_.empty() && out_.entries > limits_.max_entries)
      spent_ = "past " + std::to_string(limits_.max_entries) + " entries in this walk";
    if (spent_.empty() && limits_.deadline_ms > 0 && steady_ms() > limits_.deadline_ms)
      spent_ = "the time allowed for the walks ran out";
    return spent_;
  }

  bool hard_stop() {
    if ((++ticks_ & 63) != 0) return false;
    return (limits_.hard_deadline_ms > 0 && steady_ms() > limits_.hard_deadline_ms) || (events_.halt && events_.halt());
  }

  const WalkLimits& limits_;
  const WalkEvents& events_;
  std::vector<Frame> stack_;
  WalkOutcome out_;
  std::string spent_;
  std::uint64_t ticks_ = 0;
};

}  // namespace

WalkOutcome walk_tree(int root_fd, const std::string& label, const WalkLimits& limits, const WalkEvents& events) {
  return Walker(limits, events).run(root_fd, label);
}

bool WalkBudget::spent(const std::string& where) {
  if (!stopped.empty()) return true;
  if (entries >= max_entries) stopped = "more than " + std::to_string(max_entries) + " entries (stopped in '" + where + "')";
  else if (deadline_ms > 0 && (entries & 1023) == 0 && steady_ms() > deadline_ms)
    stopped = "the time allowed ran out (stopped in '" + where + "')";
  return !stopped.empty();
}

void walk_beneath(int root_fd, const std::string& label, WalkBudget& budget,
                  const std::function<bool(const WalkEntry&)>& visit, const std::function<bool()>& halt) {
  WalkLimits limits{budget.max_depth, budget.max_entries - budget.entries, budget.deadline_ms, budget.deadline_ms};
  WalkEvents events{[&](const WalkEntry& e) { return budget.stopped.empty() && visit(e); },
                    [&](const WalkEntry& e, const std::string& why) {
                      if (budget.stopped.empty()) budget.stopped = "'" + e.path + "': " + why + ": not walked";
                    },
                    halt};
  WalkOutcome out = walk_tree(root_fd, label, limits, events);
  budget.entries += out.entries;
  if (budget.stopped.empty() && !out.unfinished.empty() && out.entries > 0) budget.stopped = out.unfinished;
}

std::string special_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
  return "";
}

std::string clear_mode_bits(int fd, const struct stat& seen, mode_t bits) {
  struct stat st{};
  if (fd < 0 || ::fstat(fd, &st) != 0) return std::string("cannot open it: ") + std::strerror(errno);
  if ((st.st_mode & S_IFMT) != (seen.st_mode & S_IFMT) || st.st_ino != seen.st_ino || st.st_dev != seen.st_dev)
    return "it was replaced meanwhile";
  // fchmod needs a readable fd; the agent may have left the file unreadable (mode 4000): the
  // O_PATH fd through /proc/self/fd reaches the very inode without a path the agent controls.
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (::chmod(proc.c_str(), st.st_mode & 07777 & ~bits) != 0) return std::string("chmod failed: ") + std::strerror(errno);
  return "";
}

std::string strip_setid(int dirfd, const std::string& name, const struct stat& seen, mode_t bits) {
  UniqueFd fd(open_beneath(dirfd, name, O_PATH));
  if (!fd) return std::string("cannot open it: ") + std::strerror(errno);
  return clear_mode_bits(fd.get(), seen, bits);
}

}  // namespace asbx
