#pragma once
// How a started session ended, as the record says it: the cause (timeout, tripwire, disk,
// signal, OOM) decided from what the launcher did and the kernel's counters, never from
// anything the agent printed.
#include <string>

#include "base/plan.h"
#include "base/result.h"
#include "launcher/lifecycle/pump.h"

namespace asbx {

// What the session's own walls say ended it ("" when they did not).
struct WallEndings {
  std::string tripwire;      // the trip that killed it (tripwire = "kill")
  std::string disk;          // the disk watcher's verdict
  std::string disk_message;  // ... and its message
};

// The outcome, the exit code and the error of a started session whose agent ended with `code`
// (-1: podman reported none). Throws internal when no code and no cause explain the ending.
void decide_outcome(SessionResult& result, const LaunchPlan& plan, int code, const WallEndings& walls);

// The capture log's bound and a caller that stopped reading, as warnings.
void note_output_bounds(SessionResult& result, const PumpResult& pumped, std::int64_t out_max);

// What the agent left could not all be swept or set aside: the session fails closed, unless
// another launcher failure already says so (its code stays; the record names both).
void note_sweep_incomplete(SessionResult& result);

}  // namespace asbx
