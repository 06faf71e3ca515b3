// doctor's gVisor checks (docs/ISOLATION.md): runsc's version, the seat's platform (and whether
// kvm would be usable), and a trivial container under runsc through the launcher's own path.
#pragma once
#include <vector>

#include "base/seat_config.h"
#include "launcher/doctor/doctor.h"

namespace asbx {

void check_runsc(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out);

}  // namespace asbx
