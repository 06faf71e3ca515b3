// What a limit of the sweep keeps out (a directory too deep, or met after the walk's entry or time
// budget ran out) is set aside rather than left live: moved, by one rename between directory fds
// (no path of the agent's resolved), into a quarantine directory made fresh beside what is swept —
// `.asbx-quarantine-<random>`, mode 0700, owned by the launcher (root on a rootful seat): no git
// looks there (the git dirs' is in the gitdir's root, the workspace's in its root) and no other
// local user can reach a file inside. Each move is named in the record's git.quarantined; what
// cannot be moved is named in git.unswept and the session fails with sweep_incomplete
// (docs/MOUNTS.md, "After the agent"; docs/DECISIONS.md).
#pragma once
#include <string>

#include "base/beneath.h"
#include "base/git_report.h"
#include "launcher/gitguard/walk.h"

namespace asbx {

class Quarantine {
 public:
  // `base_fd`: the directory the quarantine is made in (on the filesystem of what it takes).
  Quarantine(int base_fd, std::string base_path) : base_fd_(base_fd), base_path_(std::move(base_path)) {}
  // Moves the directory `e` in, on record; or names it in report.unswept with why it could not.
  void take(const WalkEntry& e, const std::string& why, GitReport& report);

 private:
  std::string open_dir();  // "" or why the quarantine directory could not be made

  int base_fd_;
  std::string base_path_;
  UniqueFd dir_;
  std::string dir_path_;
  int taken_ = 0;
};

}  // namespace asbx
