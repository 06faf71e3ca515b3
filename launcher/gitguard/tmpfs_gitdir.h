// A gitdir's root inside the session (a plain clone's .git, a linked worktree's mirror) is a tmpfs
// (mounts/git_root.cc). Between init and start, while nothing of the agent has run, the launcher
// copies the host's HEAD, index and packed-refs (the mirror: packed-refs) into it (through the container's root, openat2, owned by the container user); the
// tmpfs fd stays open after the container ends (it pins the tmpfs, as HOME is pinned). After the
// agent ends each file is read back through that fd (no link followed, non-blocking, bounded),
// validated (gitscan/refs.h, gitscan/index.h), and put into the host gitdir as a new file renamed
// over the old one, owned as the original was — unless it is unchanged, invalid, or the host's own
// copy changed meanwhile (then the host's stays, and the record says why).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>

#include "base/beneath.h"
#include "base/git_report.h"
#include "base/plan.h"
#include "launcher/podman/container_root.h"

namespace asbx {

// HEAD, index, packed-refs by name; a missing file has no entry.
using GitdirFiles = std::map<std::string, std::string>;

class TmpfsGitdir {
 public:
  // Throws Error(git_unmountable) when the tmpfs is not there or a copy cannot be written.
  GitdirFiles stage(const ContainerRoot& root, const LaunchPlan& plan, int host_gitdir);
  // What the agent left in the tmpfs of what may come back (each file as read back; invalid ones too).
  GitdirFiles left(const LaunchPlan& plan) const;
  // `room`: what is left of the session's disk budget (bytes); a file that would grow the host's
  // gitdir past it is not copied back (the host's stays, said in not_copied_back).
  void copy_back(const LaunchPlan& plan, int host_gitdir, const GitdirFiles& left, GitReport& report,
                 std::int64_t room = INT64_MAX) const;
  void close() { fd_ = UniqueFd(); }

 private:
  struct Original {
    std::uint64_t digest = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    mode_t mode = 0644;
  };
  UniqueFd fd_;
  std::map<std::string, Original> originals_;  // by name; absent: the host had none
  Original dir_owner_;                          // for a file the host did not have
};

}  // namespace asbx
