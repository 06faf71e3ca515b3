#include "launcher/doctor/doctor_pool.h"

#include <optional>

#include "base/error.h"

#include "launcher/lifecycle/range_claim.h"
#include "launcher/pool/fill.h"
#include "launcher/pool/member.h"
#include "launcher/pool/pool.h"

namespace asbx {

void check_pool(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out) {
  if (seat.pool_size <= 0 && seat.pool_tty_size <= 0) {
    out.push_back({"pool", true, "off (pool_size = 0)", ""});
    return;
  }
  if (user.uid != 0) {
    out.push_back({"pool", true, "pool_size = " + std::to_string(seat.pool_size) + ", pool_tty_size = " +
                                     std::to_string(seat.pool_tty_size) +
                                     ", but only a root launcher claims members: this user's sessions go cold", ""});
    return;
  }
  try {
    PodmanApi api(seat.socket);
    std::vector<PoolKind> kinds = pool_kinds(seat, api);
    std::vector<int> ready(kinds.size(), 0);
    int other = 0, claimed = 0;
    for (const auto& m : list_members(api, seat.runtime_dir)) {
      std::size_t k = 0;
      while (k < kinds.size() && kinds[k].digest != m.digest) ++k;
      if (m.claimed) ++claimed;
      else if (m.ready && k < kinds.size()) ++ready[k];
      else ++other;
    }
    std::string detail;
    bool empty = false;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      detail += std::to_string(ready[k]) + " of " + std::to_string(kinds[k].want) + (kinds[k].tty ? " members with a terminal ready, " : " members ready, ");
      empty = empty || ready[k] == 0;
    }
    detail += std::to_string(other) + " stale or waiting to be removed, " + std::to_string(claimed) + " claimed";
    if (empty) detail += "; the next session of a kind with none goes cold and refills it";
    out.push_back({"pool", true, detail, ""});
  } catch (const Error& e) {
    out.push_back({"pool", false, e.what(), "fix the check it names (the pool's plan is the seat's)"});
  }
}

}  // namespace asbx
