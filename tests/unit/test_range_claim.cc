// A rootful session's user namespace range (launcher/lifecycle/range_claim.h): one per live session,
// the lowest free, never one a live process has an id of.
#include <doctest/doctest.h>

#include <optional>

#include "base/error.h"
#include "launcher/lifecycle/range_claim.h"
#include "plan/userns.h"
#include "temp_dir.h"

using namespace asbx;
using asbx::test::TempDir;

namespace {

void process(const TempDir& proc, int pid, std::int64_t uid, std::int64_t gid) {
  proc.write(std::to_string(pid) + "/status", "Name:\tsh\nUid:\t" + std::to_string(uid) + "\t" + std::to_string(uid) + "\t" +
                                                  std::to_string(uid) + "\t" + std::to_string(uid) + "\nGid:\t" +
                                                  std::to_string(gid) + "\t" + std::to_string(gid) + "\t0\t0\n");
}

}  // namespace

TEST_CASE("range claim: the lowest free range, another for a concurrent session, the first again once it is let go") {
  TempDir locks, proc;
  process(proc, 1, 0, 0);
  process(proc, 500, 1000, 1000);
  std::optional<RangeClaim> a(std::in_place, locks.s("userns"), proc.s());
  RangeClaim b(locks.s("userns"), proc.s());
  CHECK(a->slot() == 0);
  CHECK(b.slot() == 1);
  a.reset();
  CHECK(RangeClaim(locks.s("userns"), proc.s()).slot() == 0);
}

TEST_CASE("range claim: a range a live process has an id of is skipped (an orphan of a killed launcher)") {
  TempDir locks, proc;
  process(proc, 77, range_base(0) + 1000, range_base(0) + 1000);  // slot 0's agent
  process(proc, 78, 1000, range_base(1));                        // slot 1's root group
  process(proc, 79, range_base(kUsernsSlots), 0);                // past the last slot: none of ours
  CHECK(range_slots_of_processes(proc.s()) == std::set<std::int64_t>{0, 1});
  CHECK(RangeClaim(locks.s("userns"), proc.s()).slot() == 2);
}

TEST_CASE("range claim: every range held is seat_full, with the exact message") {
  TempDir locks, proc;
  for (std::int64_t k = 0; k < kUsernsSlots; ++k) process(proc, 100 + static_cast<int>(k), range_base(k), range_base(k));
  try {
    RangeClaim c(locks.s("userns"), proc.s());
    FAIL("claimed " << c.slot());
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::seat_full);
    CHECK(std::string(e.what()) == "seat full: all 1024 user namespace ranges are held by live sessions (" +
                                       locks.s("userns") + ")");
  }
}

TEST_CASE("range claim: the range is the plan's map, its HOME's owner and the agent's kernel ids") {
  CHECK(range_base(0) == 0x70000000);
  CHECK(range_base(3) == 0x70000000 + 3 * 65536);
  CHECK(range_base(kUsernsSlots) == 0x74000000);
}
