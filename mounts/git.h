// A linked git worktree (a `.git` FILE with `gitdir:`) needs its gitdir and the common
// dir at the SAME absolute paths inside, or git breaks. The agent writes the `.git` file
// and everything in the gitdir, so neither may choose what is mounted: the caller names
// the common dir (`--git-mirror PATH`) and the link is checked both ways:
//   <workspace>/.git  -> gitdir: <mirror>/worktrees/<name>   (resolved; exactly that dir)
//   <gitdir>/commondir -> <mirror>                           (resolved)
//   <gitdir>/gitdir    -> <workspace>/.git                   (resolved)
// The mirror must lie under one of the seat's git roots, outside the workspace (and the
// workspace outside it). What git executes or obeys stays read-only inside (docs/MOUNTS.md):
// the mirror is bound read-only, and only what a commit writes is bound read-write on top.
#pragma once
#include <string>
#include <vector>

#include "base/plan.h"

namespace asbx {

// The path after "gitdir:" on the first line (whitespace trimmed); "" when absent.
std::string parse_gitdir_file(const std::string& text);
// `value` relative to `base` unless absolute (how git reads gitdir and commondir).
std::string join_git_path(const std::string& base, const std::string& value);
// No mounts for a plain repository or no repository (when no mirror is named); for a
// linked worktree the mirror's binds, each with the device and inode it was checked as.
// Throws Error(git_unmountable) naming the workspace and the reason; nothing is created.
std::vector<Mount> plan_git_mounts(const std::string& workspace, const std::string& mirror,
                                   const std::vector<std::string>& git_roots);

}  // namespace asbx
