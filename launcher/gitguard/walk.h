// The bounded walk the launcher makes over what the agent could write, after it ended: never
// following a link (every open is openat2 beneath the parent's fd, RESOLVE_NO_SYMLINKS, no mount
// crossed), non-blocking, at most so many entries, so deep, for so long. What stops it early is
// said, never silently skipped.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <sys/stat.h>

namespace asbx {

struct WalkBudget {
  std::int64_t max_entries = 2'000'000;
  int max_depth = 128;
  std::int64_t deadline_ms = 0;  // steady clock; 0 = none
  std::int64_t entries = 0;
  std::string stopped;  // the first reason a walk stopped early ("" = complete)
  bool spent(const std::string& where);
};

// One directory entry, as lstat saw it; `dirfd` is its parent, open for the visit's length.
struct WalkEntry {
  int dirfd;
  std::string name;
  std::string path;  // the root's label + "/" + the relative path
  struct stat st;
  int depth;         // 0 = directly in the root
};

// Calls `visit` for every entry beneath `root_fd` (a directory fd); a directory is descended
// into when `visit` returns true. `label` names the root in paths ("/srv/ws" → "/srv/ws/a/b").
void walk_beneath(int root_fd, const std::string& label, WalkBudget& budget,
                  const std::function<bool(const WalkEntry&)>& visit);

// lstat kinds the sweep removes: "symlink", "fifo", "socket", "device"; "" for a file or directory.
std::string special_kind(mode_t mode);
// Clears S_ISUID/S_ISGID of the regular file `name` in `dirfd` (never through a link: an O_PATH fd
// checked to be the same inode). Returns "" or why it could not.
std::string strip_setid(int dirfd, const std::string& name, const struct stat& seen);

}  // namespace asbx
