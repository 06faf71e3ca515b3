// What the launcher tells the caller about each git finding (one `agent-sandbox: warning:` line):
// the path, what a plain git on the host would do with it, and the safe way to proceed.
#pragma once
#include <string>

#include "base/git_report.h"

namespace asbx {

// `safe_git` is the `agent-sandbox git --workspace WS [--git-mirror M]` prefix for this workspace.
std::string finding_warning(const GitFinding& finding, const std::string& safe_git);
// The prefix itself.
std::string safe_git_command(const std::string& workspace, const std::string& mirror);

}  // namespace asbx
