// The runtimes' own sandboxes cannot work inside the container (codex's bwrap cannot map uids
// with every capability dropped, and codex then exits 0 having done nothing), so the container
// is the sandbox and the CLI must be told to run without its own. The launcher never rewrites
// the user's argv: it requires one of the row's forms and records which one it saw.
// Pure. docs/AGENTS.md explains the choice.
#pragma once
#include <string>
#include <vector>

namespace asbx {

struct InnerSandboxRule {
  std::string runtime;                 // credtable row name
  std::string command;                 // the CLI's argv[0] basename
  std::vector<std::string> off_forms;  // "--flag" or "--option value" (also matched as --option=value)
  std::string why;                     // the reason, for the usage error
};

// The built-in rows for codex and claude; "" when the runtime has no rule.
// TODO(credtable): these fields move into the credtable rows once they exist.
const InnerSandboxRule* builtin_inner_sandbox_rule(const std::string& runtime);

// What the status record says: "off: FORM", "n/a: informational" (--version, --help),
// "unchecked: argv[0] is not CMD" (a wrapper the launcher cannot see into).
// Throws Error(usage) when argv runs the CLI itself without any off form.
std::string inner_sandbox_state(const InnerSandboxRule& rule, const std::vector<std::string>& argv);

}  // namespace asbx
