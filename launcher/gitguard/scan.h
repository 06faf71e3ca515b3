// The walks after the agent ended (launcher/gitguard/guard.h runs them, in this order):
//  - the sweep of every writable git dir (objects/, refs/, logs/, a linked worktree's gitdir):
//    what git itself never creates there (symlinks, FIFOs, sockets, devices) is removed, named;
//  - the workspace: setuid/setgid bits are stripped (the sweep strips them in the git dirs too),
//    and what a host git would obey that the agent made is found as data: repositories and
//    `.git` files inside the workspace, bare repositories, a `.git` made where there was none,
//    with the keys of their configs that run programs.
#pragma once
#include <string>

#include "base/git_plan.h"
#include "base/git_report.h"
#include "launcher/gitguard/quarantine.h"
#include "launcher/gitguard/walk.h"

namespace asbx {

// A directory as git's is_git_directory() (setup.c) sees it, from lstat and bounded reads only.
struct GitDirProbe {
  std::string head;        // a regular file HEAD's first bytes
  bool head_link = false;  // HEAD is a symlink (git reads a refs/… target, follows any other)
  bool objects = false, refs = false, commondir = false;  // present (dir or symlink)
  std::string detail;      // the commondir value, for the finding
};
// HEAD's text names a ref ("ref: refs/…") or an object (hex).
bool valid_head(const std::string& text);
// A git run in or below it would take it as a repository (and obey its config): it is reported.
bool looks_like_git_directory(const GitDirProbe& p);

// Each returns the entries it looked at; what a limit kept out goes to `quarantine`
// (launcher/gitguard/quarantine.h), what stays live to report.unswept.
std::int64_t sweep_git_dir(int dir_fd, const std::string& label, const WalkLimits& limits, Quarantine& quarantine,
                           GitReport& report);
std::int64_t scan_workspace(int ws_fd, const GitPlan& git, const std::string& container_ws, const WalkLimits& limits,
                            Quarantine& quarantine, GitReport& report);
// The index the host's git reads in `gitdir_fd` (the plain clone's .git, the linked worktree's
// gitdir): removed, on record (git.removed, kind "index"), when an entry's path is one git refuses
// (gitscan/index.h); when it cannot be, a finding and report.unswept (sweep_incomplete).
void drop_bad_index(int gitdir_fd, const std::string& gitdir, std::size_t hash_len, GitReport& report);
// A linked worktree's gitdir: a rebase, cherry-pick or revert the agent left in progress.
void find_operation_in_progress(int gitdir_fd, const std::string& gitdir, GitReport& report);

}  // namespace asbx
