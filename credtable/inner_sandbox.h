// The runtimes' own sandboxes cannot work inside the container (codex's bwrap cannot map uids
// with every capability dropped, and codex then exits 0 having done nothing), so the container
// is the sandbox and the CLI must be told to run without its own. The launcher never rewrites
// the user's argv: it requires one of the row's `inner_sandbox_off` forms and records which
// one it saw. Pure. docs/AGENTS.md explains the choice.
#pragma once
#include <string>
#include <vector>

#include "credtable/credtable.h"

namespace asbx {

// What the status record says: "off: FORM", "n/a" (the row names no inner sandbox),
// "n/a: informational" (--version, --help), or "unchecked: argv[0] is not CMD" (a wrapper
// the launcher cannot see into). A form is "--flag" or "--option value" (also matched as
// --option=value); argv after a bare "--" is not searched.
// Throws Error(usage) when argv runs the row's CLI itself without any of its forms.
std::string inner_sandbox_state(const CredRow& row, const std::vector<std::string>& argv);

}  // namespace asbx
