// The seat side of a dispatched session's state: sandbox-run collects into the seat's
// export area (<state dir of the ledger>/state-export/<id>/), and the caller, over the same
// ssh connection, runs `sandbox-run state-export ID` on a second channel, which streams
// the tree (state/frames.h) and removes it. Trees nobody fetched are removed by gc.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "plan/config.h"
#include "state/plan_state.h"

namespace asbx {

// A tree nobody fetched for this long is stale (gc removes it).
inline constexpr std::int64_t kStaleExportSeconds = 3600;

// Streams the tree of session `id` on stdout, then removes it; waits up to `wait_s` for it to
// appear (the caller stopped the session and the seat is still ending it). Returns the exit code.
int state_export_main(const std::string& program, const std::string& id, int wait_s);
// Removes trees and partial trees in `area` last changed more than `max_age_s` ago;
// returns one line per removal.
std::vector<std::string> remove_stale_exports(const std::string& area, std::int64_t now_unix, std::int64_t max_age_s);

}  // namespace asbx
