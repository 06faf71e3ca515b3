// The bounded walk the launcher makes over what the agent could write, after it ended: never
// following a link (every open is openat2 beneath the parent's fd, RESOLVE_NO_SYMLINKS, no mount
// crossed), non-blocking, iterative (an explicit stack: no depth of the agent's can blow the
// launcher's), at most one open directory per level. A limit skips a subtree, never the rest:
//  - a directory deeper than max_depth is set aside (not entered), the walk goes on beside it;
//  - past max_entries (this walk) or the soft deadline no directory is entered any more: each one
//    not yet walked is set aside; files are still looked at (cheap: one lstat each);
//  - past the hard deadline the walk stops: `unfinished` names where, and the caller says what
//    was not swept (docs/MOUNTS.md, "After the agent").
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <sys/stat.h>

namespace asbx {

struct WalkLimits {
  int max_depth = 128;
  std::int64_t max_entries = 2'000'000;
  std::int64_t deadline_ms = 0;       // steady clock; 0 = none
  std::int64_t hard_deadline_ms = 0;  // steady clock; 0 = none
};

// One directory entry, as lstat saw it; `dirfd` is its parent, open for the visit's length.
struct WalkEntry {
  int dirfd;
  std::string name;
  std::string path;  // the root's label + "/" + the relative path
  struct stat st;
  int depth;         // 0 = directly in the root
};

struct WalkEvents {
  std::function<bool(const WalkEntry&)> visit;  // true: descend into this directory
  // A directory `visit` wanted walked that a limit keeps out; `why` names the limit.
  std::function<void(const WalkEntry&, const std::string& why)> set_aside;
  std::function<bool()> halt;  // optional, asked every 64 entries: true stops the walk (`unfinished`)
};

struct WalkOutcome {
  std::int64_t entries = 0;
  std::string unfinished;  // "" = every entry was visited or set aside; else where the hard stop came
};

WalkOutcome walk_tree(int root_fd, const std::string& label, const WalkLimits& limits, const WalkEvents& events);

// The older, all-or-nothing form for reads that only inform (the refs, the history scan's packs):
// the first limit met stops everything, said in `stopped`.
struct WalkBudget {
  std::int64_t max_entries = 2'000'000;
  int max_depth = 128;
  std::int64_t deadline_ms = 0;  // steady clock; 0 = none
  std::int64_t entries = 0;
  std::string stopped;  // the first reason a walk stopped early ("" = complete)
  bool spent(const std::string& where);
};

void walk_beneath(int root_fd, const std::string& label, WalkBudget& budget,
                  const std::function<bool(const WalkEntry&)>& visit, const std::function<bool()>& halt = {});

// lstat kinds the sweep removes: "symlink", "fifo", "socket", "device"; "" for a file or directory.
std::string special_kind(mode_t mode);
// Clears S_ISUID/S_ISGID of the regular file `name` in `dirfd` (never through a link: an O_PATH fd
// checked to be the same inode). Returns "" or why it could not.
std::string strip_setid(int dirfd, const std::string& name, const struct stat& seen, mode_t bits);
// The same on an fd already held (O_PATH is enough): `bits` cleared when it is still `seen`.
std::string clear_mode_bits(int fd, const struct stat& seen, mode_t bits);

}  // namespace asbx
