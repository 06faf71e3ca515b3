// `--persist`: the session belongs to a supervisor from its first moment, and the launcher the
// owner typed becomes its first terminal. Before anything is created the launcher makes the
// session's dir (0700) and its attach socket, connects to it, then forks the supervisor (its own
// session, stdio on /dev/null): the supervisor's pid is the one on the container's labels, so gc
// judges it as any launcher and never removes the session before its timeout. The supervisor runs
// the usual session on a pty of its own (launcher/persist/server.h serves the socket), writes the
// usual records, tells the attached terminal, removes the socket and the dir. docs/LIFECYCLE.md.
#pragma once
#include "base/plan.h"
#include "base/request.h"
#include "launcher/lifecycle/local.h"

namespace asbx {

// In the launcher the owner typed: the attached terminal's exit code (launcher/persist/client.h);
// in the supervisor: the session's exit code, once its records are written.
int run_persistent(const Request& req, const SeatConfig& seat, LaunchPlan plan, const LocalOptions& opts);

}  // namespace asbx
