// Command-line entry points. Each executable's main() is one call to these.
#pragma once

namespace asbx {

int agent_sandbox_main(int argc, char** argv);  // caller side (local seat or ssh dispatch)
int sandbox_run_main(int argc, char** argv);    // seat side

}  // namespace asbx
