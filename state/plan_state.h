// --state-dir / the seat config's [state] dir → the plan's StatePlan. Pure but for one
// check: DIR/<id> must not exist yet (refused before anything is created).
#pragma once
#include <string>

#include "base/plan.h"
#include "base/request.h"
#include "base/seat_config.h"

namespace asbx {

// Fills plan.state.dir and limits (plan.state.paths came from the runtime row). Throws
// Error(usage) naming the flag or the config file.
void plan_state(const Request& req, const SeatConfig& seat, LaunchPlan& plan);
// The caller's side of a dispatched session: where the fetched state goes ("" = nowhere)
// and the caller's own caps. Same checks as plan_state.
StatePlan caller_state_plan(const Request& req, const SeatConfig& caller);

// Where a seat keeps dispatched sessions' state until the caller fetches it (beside its ledger).
std::string state_export_area(const SeatConfig& seat);
// Whether DIR/<id> (or its partial tree) already exists: checked before a session starts.
bool state_tree_exists(const std::string& dir, const std::string& id);

}  // namespace asbx
