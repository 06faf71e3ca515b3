// What the agent leaves behind never acts on the host (docs/MOUNTS.md, "After the agent"). One
// per session, driven by launcher/lifecycle/session.cc:
//   pin      before anything exists: the workspace and every git dir of the plan opened by fd
//            (no symlink on the way) and checked to be what was validated;
//   stage    between init and start: a plain clone's HEAD, index and packed-refs into its tmpfs
//            gitdir; the refs and gitlinks as they are, to compare with afterwards;
//   conclude after the agent ended, on every ending (exit, timeout, signal, OOM, a launcher
//            error after start), before the launcher returns: sweep the writable git dirs, clear
//            setuid/setgid and world-write, copy the tmpfs files back, scan for what a host
//            git would obey; the record's `git` object and one warning per finding. Never throws.
#pragma once
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "base/beneath.h"
#include "base/plan.h"
#include "base/result.h"
#include "launcher/gitguard/history.h"
#include "launcher/gitguard/tmpfs_gitdir.h"
#include "launcher/podman/container_root.h"

namespace asbx {

class GitGuard {
 public:
  // Throws Error(workspace_rejected / git_unmountable) naming the directory that changed, or
  // workspace_rejected when another session holds the workspace.
  void pin(const LaunchPlan& plan);
  // Throws Error(git_unmountable) when the tmpfs gitdir cannot be filled.
  void stage(const ContainerRoot& root, const LaunchPlan& plan);
  void conclude(const LaunchPlan& plan, SessionResult& result);

 private:
  void scan_git(const LaunchPlan& plan, const GitdirFiles& left, WalkBudget& budget, GitReport& report);
  GitdirFiles worktree_files(const LaunchPlan& plan) const;
  void lock_workspace(const std::string& path);
  void restore_workspace_mode(const std::string& path, GitReport& report);

  UniqueFd workspace_lock_;  // flock'd from pin to the guard's end: one session per workspace
  UniqueFd workspace_, gitdir_, common_;
  struct stat workspace_before_{};  // its mode when pinned
  std::vector<UniqueFd> writable_;  // as plan.git.writable
  TmpfsGitdir tmpfs_;
  RefState refs_before_;
  std::set<std::string> gitlinks_before_;
  std::int64_t session_start_ = 0;
  bool staged_ = false;
};

}  // namespace asbx
