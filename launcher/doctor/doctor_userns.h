// `doctor`'s user_namespace lines (docs/DECISIONS.md, issue 34): what a rootful seat's sessions get
// and, where that is a range of their own, per workspace root and git root whether binds there can
// be idmapped (sessions on a root that cannot are refused with 231).
#pragma once
#include <vector>

#include "launcher/doctor/doctor.h"
#include "plan/config.h"

namespace asbx {

void check_user_namespace(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out);

}  // namespace asbx
