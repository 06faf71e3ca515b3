// `doctor`'s pool line (docs/DECISIONS.md "Issue 37: the warm pool"): off, or how many members are
// ready for the seat's plan now, how many wait made for another plan, and how many are claimed.
#pragma once
#include <vector>

#include "launcher/doctor/doctor.h"
#include "plan/config.h"

namespace asbx {

void check_pool(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out);

}  // namespace asbx
