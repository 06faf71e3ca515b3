// `doctor`'s credential lines: per credtable row, the default credential of this user with
// its auth kind, account and time left (credtable/lifetime.h). Never a token value.
#pragma once
#include <cstdint>
#include <vector>

#include "plan/config.h"
#include "launcher/doctor/doctor.h"

namespace asbx {

void check_credentials(const SeatConfig& seat, const UserFacts& user, std::int64_t now_unix,
                       std::vector<DoctorCheck>& out);

}  // namespace asbx
