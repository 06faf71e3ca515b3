// `agent-sandbox git`: how the host's git is run for a workspace so that nothing the agent wrote
// can run (docs/CALLERS.md, "The host's git"). Pure: the mechanism (launcher/gitguard/safe_git.cc)
// validates the workspace, reads the repository's config files and executes the result.
//
// GIT_DIR and GIT_WORK_TREE (and GIT_COMMON_DIR for a linked worktree) are pinned, so git never
// discovers a repository through the agent's `.git`. Configuration given in the environment
// (GIT_CONFIG_COUNT) wins over every file git reads; a caller's own `-c` in ARGS comes later and
// wins over it (the caller is trusted, the repository is not).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gitscan/config.h"

namespace asbx {

struct GitOverride {
  std::string key, value;
  bool operator==(const GitOverride&) const = default;
};

// The fixed rows (fsmonitor off, hooks from /dev/null, no credential helpers, pager and editor
// off, submodules not entered, protocols ext and file off, no signing, no auto gc) plus, for each
// filter, diff or merge driver, remote and tool the repository's config names, its program keys
// emptied (a filter then passes content through; a diff or merge driver fails closed).
std::vector<GitOverride> safe_git_overrides(const std::vector<GitConfigEntry>& repository_config);

struct SafeGitRun {
  std::vector<std::string> argv;                                        // /usr/bin/git --no-pager ARGS...
  std::vector<std::pair<std::string, std::optional<std::string>>> env;  // set (value) or unset (nullopt)
};

// `gitdir` is the repository's own gitdir, `common_dir` the mirror for a linked worktree ("" for a
// plain clone); `environ` is the caller's environment (a GIT_CONFIG_COUNT of its own is kept, ours
// follow it).
SafeGitRun safe_git_run(const std::string& git, const std::string& work_tree, const std::string& gitdir,
                        const std::string& common_dir, const std::vector<GitConfigEntry>& repository_config,
                        const std::map<std::string, std::string>& environ, const std::vector<std::string>& args);

}  // namespace asbx
