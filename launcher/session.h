// The mechanism: executes a LaunchPlan against podman's REST API.
// create → (limits check) → init → attach → start → pump stdio → wait → inspect → delete.
#pragma once
#include "launcher/plan.h"
#include "launcher/result.h"

namespace asbx {

struct StdioFds {
  int in = 0;
  int out = 1;
  int err = 2;
};

// Never throws: every failure becomes a launcher_error result, and the container
// (if one was created) is removed before this returns.
SessionResult run_session(const LaunchPlan& plan, const StdioFds& io);

// The catatonit line that podman 4.3's init prints when the command cannot be exec'd;
// returns command_not_found / command_not_executable, or nullopt.
std::optional<ErrorKind> exec_failure_from_stderr(const std::string& first_stderr);

}  // namespace asbx
