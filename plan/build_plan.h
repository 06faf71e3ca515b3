// The policy that decides a session: a request, the seat's config and facts about the user
// and this launch → the LaunchPlan (pure; throws Error naming the flag, file or path).
#pragma once
#include "base/plan.h"
#include "base/request.h"
#include "base/seat_config.h"

namespace asbx {

LaunchPlan build_plan(const Request& req, const SeatConfig& seat, const UserFacts& user, const SessionFacts& facts);

}  // namespace asbx
