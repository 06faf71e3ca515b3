// `agent-sandbox git --workspace WS [--git-mirror M] -- ARGS…` (and `sandbox-run git …` on a
// seat): the host's git, as the caller, for a workspace an agent has written. The workspace and
// its git link are validated exactly as for a session (mounts/workspace.h, mounts/git.h), the
// repository's config files (and what they include) are read as data to name every driver and
// remote, and /usr/bin/git replaces this process with the configuration of gitscan/safe_git.h.
// Its exit code is git's; the launcher's own failures are its codes (usage, workspace_rejected,
// git_unmountable, host_git_unavailable).
#pragma once
#include <string>
#include <vector>

namespace asbx {

int safe_git_main(const std::string& program, const std::string& workspace, const std::string& mirror,
                  const std::vector<std::string>& args);

}  // namespace asbx
