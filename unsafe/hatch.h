// agent-sandbox-unsafe: a human whose containerized path is broken can still start an agent,
// directly on this host, in a transient scope under unsafe.slice. Nothing in agent-sandbox
// links this; no variable routes to it. It refuses before launching anything unless a human
// is at a terminal outside any container and outside any agent.
#pragma once
#include <string>
#include <vector>

#include "unsafe/refusals.h"

namespace asbx::unsafe {

struct HatchOptions {
  std::string root = "/";  // where kContainerFiles and /run/systemd/system are looked for; only the test build changes it
};

HatchFacts current_facts(const HatchOptions& opts);
// The transient scope: the system manager for root, the caller's user manager otherwise.
std::vector<std::string> systemd_run_argv(const std::string& systemd_run, bool user_manager, long pid,
                                          const std::vector<std::string>& command);
// Refuses (returns the code) or replaces this process with systemd-run; the agent's exit
// code is then systemd-run's. Prints its diagnostics on stderr.
int run_hatch(const std::vector<std::string>& command, const HatchOptions& opts);
// Splits "[--] COMMAND [ARG...]"; throws Error(usage). Returns {} after printing --help.
std::vector<std::string> parse_command(const std::vector<std::string>& args, bool& help);

}  // namespace asbx::unsafe
