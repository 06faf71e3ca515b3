// A linked git worktree (a `.git` FILE with `gitdir:`) needs its gitdir and the common
// dir (from `commondir`) at the SAME absolute paths inside, or git breaks. Both are
// resolved with realpath and must lie under the seat's permitted git roots.
#pragma once
#include <string>
#include <vector>

#include "launcher/plan.h"

namespace asbx {

// The path after "gitdir:" on the first line (whitespace trimmed); "" when absent.
std::string parse_gitdir_file(const std::string& text);
// `value` relative to `base` unless absolute (how git reads gitdir and commondir).
std::string join_git_path(const std::string& base, const std::string& value);
// No mounts for a plain repository or no repository; read-write binds for a linked
// worktree. Throws Error(git_unmountable) naming the workspace, the dir and the reason.
std::vector<Mount> plan_git_mounts(const std::string& workspace, const std::vector<std::string>& git_roots);

}  // namespace asbx
