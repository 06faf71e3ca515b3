// Running a request on this machine's seat: config → plan → session → records.
#pragma once
#include <string>

#include "base/request.h"

namespace asbx {

struct LocalOptions {
  std::string program = "agent-sandbox";  // prefix of diagnostics
};

// Returns the launcher's exit code; writes the status file and the ledger line.
int run_local(const Request& req, const LocalOptions& opts);
// Loads the seat config for the current user (default path), or throws Error(config).
SeatConfig current_seat_config();

}  // namespace asbx
