// Running a request on this machine's seat: config → plan → session → records.
#pragma once
#include "launcher/pool/take.h"
#include <string>
#include <vector>

#include "base/request.h"
#include "launcher/lifecycle/session.h"

namespace asbx {

struct LocalOptions {
  std::string program = "agent-sandbox";  // prefix of diagnostics
};

// Returns the launcher's exit code; writes the status file and the ledger line.
int run_local(const Request& req, const LocalOptions& opts);
// What a session's end says: its exit code and the lines for the caller's stderr.
struct SessionEnd {
  int exit_code = 0;
  std::vector<std::string> lines;
};
// After the plan: launch-time gc, the session on `io`, the records (status file, ledger). Used by
// run_local and by a persistent session's supervisor, whose terminal gets `lines` over the socket.
SessionEnd run_planned(const Request& req, const SeatConfig& seat, const LaunchPlan& plan, const StdioFds& io,
                       const LocalOptions& opts, WarmMember* warm = nullptr, const std::string& why_cold = "");
// Loads the seat config for the current user (default path), or throws Error(config).
SeatConfig current_seat_config();

}  // namespace asbx
