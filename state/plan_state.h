// --state-dir / the seat config's [state] dir → the plan's StatePlan. Pure but for one
// check: DIR/<id> must not exist yet (refused before anything is created).
#pragma once
#include <string>

#include "plan/config.h"
#include "base/plan.h"
#include "base/request.h"

namespace asbx {

// Fills plan.state.dir and limits (plan.state.paths came from the runtime row). Throws
// Error(usage) naming the flag or the config file.
void plan_state(const Request& req, const SeatConfig& seat, LaunchPlan& plan);
// The caller's side of a dispatched session: where the fetched state goes ("" = nowhere)
// and the caller's own caps. Same checks as plan_state.
StatePlan caller_state_plan(const Request& req, const SeatConfig& caller);

}  // namespace asbx
