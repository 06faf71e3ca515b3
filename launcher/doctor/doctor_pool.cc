#include "launcher/doctor/doctor_pool.h"

#include <optional>

#include "base/error.h"

#include "launcher/lifecycle/range_claim.h"
#include "launcher/pool/fill.h"
#include "launcher/pool/member.h"
#include "launcher/pool/pool.h"

namespace asbx {

void check_pool(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out) {
  if (seat.pool_size <= 0) {
    out.push_back({"pool", true, "off (pool_size = 0)", ""});
    return;
  }
  if (user.uid != 0) {
    out.push_back({"pool", true, "pool_size = " + std::to_string(seat.pool_size) +
                                     ", but only a root launcher claims members: this user's sessions go cold", ""});
    return;
  }
  try {
    PodmanApi api(seat.socket);
    std::string digest = pool_plan_digest(seat, api);
    int ready = 0, other = 0, claimed = 0;
    for (const auto& m : list_members(api, seat.runtime_dir)) {
      if (m.claimed) ++claimed;
      else if (m.ready && m.digest == digest) ++ready;
      else ++other;
    }
    std::string detail = std::to_string(ready) + " of " + std::to_string(seat.pool_size) + " members ready, " +
                         std::to_string(other) + " stale or waiting to be removed, " + std::to_string(claimed) + " claimed";
    if (ready == 0) detail += "; the next session goes cold and refills it";
    out.push_back({"pool", true, detail, ""});
  } catch (const Error& e) {
    out.push_back({"pool", false, e.what(), "fix the check it names (the pool's plan is the seat's)"});
  }
}

}  // namespace asbx
