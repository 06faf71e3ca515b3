#include "launcher/state/walk.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/podman/container_root.h"
#include "base/fdio.h"
#include "base/beneath.h"

namespace asbx {
namespace {

constexpr std::int64_t kMaxCredentialBytes = 1 << 20;  // as launcher/lifecycle/home.cc

std::string join_rel(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

// At most `max` names of the directory open at `fd` (its offset is its own: a dup would share it).
std::vector<std::string> read_names(int fd, std::size_t max, bool& more) {
  std::vector<std::string> names;
  more = false;
  int own = open_beneath(fd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK);
  DIR* d = own >= 0 ? ::fdopendir(own) : nullptr;
  if (!d) {
    if (own >= 0) ::close(own);
    return names;
  }
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == max) {
      more = true;
      break;
    }
    names.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

class Walk {
 public:
  Walk(const WalkInput& in, StateSink& sink, StateReport& report)
      : in_(in), sink_(sink), report_(report), budget_(walk_budget(in.limits)) {}

  void path(const std::string& relative) {
    if (stopped_) return;
    if (relative.empty()) return directory_contents(in_.top_fd, "", 0, false);
    auto slash = relative.rfind('/');
    std::string parent = slash == std::string::npos ? "" : relative.substr(0, slash);
    UniqueFd at(open_beneath(in_.top_fd, parent, O_PATH | O_DIRECTORY));
    if (!at) {
      if (errno == ELOOP) report_.skip(relative, "a symlink on the way");
      else if (errno == ENOTDIR) report_.skip(relative, "something other than a directory on the way");
      else if (errno == EXDEV) report_.skip(relative, "another mount on the way");
      return;  // ENOENT: the agent left nothing there
    }
    struct stat st{};
    if (::fstatat(at.get(), relative.substr(slash + 1).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (!make_parents(parent)) return;
    entry(at.get(), relative.substr(slash + 1), relative, 0);
  }

 private:
  // The sink gets each directory above a state path once (".codex" before ".codex/sessions").
  bool make_parents(const std::string& parent) {
    if (parent.empty() || made_.count(parent)) return true;
    auto slash = parent.rfind('/');
    if (slash != std::string::npos && !make_parents(parent.substr(0, slash))) return false;
    std::string why = sink_.dir(parent);
    if (!why.empty()) {
      report_.skip(parent, why);
      return false;
    }
    made_.insert(parent);
    return true;
  }

  void entry(int dirfd, const std::string& name, const std::string& rel, int depth) {
    struct stat st{};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return report_.skip(rel, "vanished");
    std::string refusal = kind_refusal(st.st_mode);
    if (!refusal.empty()) return report_.skip(rel, refusal);
    if (!is_safe_name(name)) return report_.skip(rel, "a name with a control character");
    if (S_ISDIR(st.st_mode)) return directory(dirfd, name, rel, depth, st);
    regular(dirfd, name, rel, st);
  }

  void directory(int dirfd, const std::string& name, const std::string& rel, int depth, const struct stat& seen) {
    if (depth >= kMaxStateDepth) return report_.skip(rel, "deeper than " + std::to_string(kMaxStateDepth) + " levels");
    UniqueFd fd(open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK));
    struct stat st{};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_ino != seen.st_ino || st.st_dev != seen.st_dev)
      return report_.skip(rel, "could not be opened as the directory it was");
    directory_contents(fd.get(), rel, depth + 1, true);
  }

  // The names are read (bounded) before the sink makes the directory: one skipped whole is
  // not made at all.
  void directory_contents(int fd, const std::string& rel, int depth, bool make) {
    std::size_t max = static_cast<std::size_t>(std::max<std::int64_t>(in_.limits.max_files, 0));
    bool more = false;
    auto names = read_names(fd, std::min<std::int64_t>(max, budget_ - examined_) + 1, more);
    examined_ += static_cast<std::int64_t>(names.size());
    if (names.size() > max) {
      return report_.skip(rel, "more than " + std::to_string(in_.limits.max_files) +
                                   " entries (the file-count cap): not read");
    }
    if (examined_ > budget_) {
      stopped_ = true;
      return report_.skip(rel, "the walk's budget of " + std::to_string(budget_) +
                                   " entries was spent here; the rest was not read");
    }
    if (make) {
      std::string why = sink_.dir(rel);
      if (!why.empty()) return report_.skip(rel, why);
      made_.insert(rel);
    }
    for (const auto& name : names) {
      if (stopped_) return;
      entry(fd, name, join_rel(rel, name), depth);
    }
  }

  void regular(int dirfd, const std::string& name, const std::string& rel, const struct stat& seen) {
    std::string refusal = file_refusal(seen, report_.files, report_.bytes, in_.limits);
    if (!refusal.empty()) return report_.skip(rel, refusal);
    UniqueFd fd(open_beneath(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY));
    struct stat st{};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_ino != seen.st_ino || st.st_dev != seen.st_dev ||
        st.st_size != seen.st_size || !S_ISREG(st.st_mode))
      return report_.skip(rel, "could not be opened as the file it was");
    if (is_credential(fd.get(), st.st_size)) return report_.skip(rel, "a copy of a staged credential");
    std::string why = sink_.file(rel, fd.get(), st.st_size);
    if (!why.empty()) return report_.skip(rel, why);
    report_.files += 1;
    report_.bytes += st.st_size;
  }

  // Only a file of a credential's exact size is read for the comparison (at most 1 MiB).
  bool is_credential(int fd, std::int64_t size) {
    bool candidate = false;
    for (const auto& c : in_.credentials) candidate = candidate || c.size == size;
    if (!candidate || size > kMaxCredentialBytes) return false;
    std::string data(static_cast<std::size_t>(size), '\0');
    std::int64_t got = 0;
    while (got < size) {
      ssize_t n = ::pread(fd, data.data() + got, static_cast<std::size_t>(size - got), got);
      if (n <= 0) return true;  // unreadable where a credential could be: keep it out
      got += n;
    }
    std::uint64_t digest = content_digest(data);
    std::fill(data.begin(), data.end(), '\0');
    for (const auto& c : in_.credentials)
      if (c.size == size && c.digest == digest) return true;
    return false;
  }

  const WalkInput& in_;
  StateSink& sink_;
  StateReport& report_;
  std::int64_t budget_;
  std::int64_t examined_ = 0;
  bool stopped_ = false;
  std::set<std::string> made_;
};

}  // namespace

std::int64_t walk_budget(const StateLimits& limits) { return std::max<std::int64_t>(2 * limits.max_files, 1000); }

void walk_state(const WalkInput& in, StateSink& sink, StateReport& report) {
  Walk walk(in, sink, report);
  for (const auto& p : in.paths) walk.path(p);
}

std::string copy_exactly(int from, int to, std::int64_t size) {
  char buf[64 * 1024];
  std::int64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(from, buf, static_cast<std::size_t>(std::min<std::int64_t>(sizeof buf, size - done)), done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string("cannot read it: ") + std::strerror(errno);
    if (n == 0) return "it shrank while it was read";
    if (!write_all(to, buf, static_cast<std::size_t>(n))) return std::string("cannot write it: ") + std::strerror(errno);
    done += n;
  }
  return "";
}

}  // namespace asbx
