// The caller's side of a dispatched session's state: over the same ssh connection, a
// second channel runs `sandbox-run state-export ID` and the stream (state/frames.h) is
// written into DIR/<id>/ with the caller's own rules. No other tool on either side.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "launcher/remote/ssh_session.h"
#include "base/state_report.h"
#include "state/rules.h"

namespace asbx {

// The seat's `state` (from its record) merged with what arrived here: dir is the caller's
// DIR/<id>, files and bytes count what was written here, the skipped entries of both sides.
// `wait_s` > 0 when the caller stopped the session and the seat is still ending it.
StateReport fetch_state(SshConnection& conn, const std::string& id, const StatePlan& plan, const nlohmann::json& seat_state,
                        int wait_s);
// "state-export ID [--wait N]" for the seat (the id is validated: no quoting needed).
std::string state_export_command(const std::string& id, int wait_s);

}  // namespace asbx
