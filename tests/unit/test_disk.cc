// The disk budget and floor: the config keys, the cap, the watcher's pure rule, the walk's count.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/doctor/doctor_disk.h"
#include "launcher/lifecycle/disk_usage.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "temp_dir.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;

namespace {

Limits limits(std::int64_t bytes, std::int64_t inodes) {
  Limits l;
  l.disk_bytes = bytes, l.disk_inodes = inodes, l.floor_bytes = 1000, l.floor_inodes = 10, l.disk_source = "s.toml";
  return l;
}

}  // namespace

TEST_CASE("disk: [limits] keys, their errors, and --disk never above the seat's") {
  SeatConfig seat = parse_seat_config("[limits]\ndisk = \"1g\"\ndisk_inodes = 500\ndisk_floor = \"3g\"\ndisk_floor_inodes = 9\n",
                                      "s.toml", root_user());
  CHECK((seat.disk == "1g" && seat.disk_inodes == 500 && seat.disk_floor == "3g" && seat.disk_floor_inodes == 9));
  CHECK_THROWS_WITH_AS(parse_seat_config("[limits]\ndisk = \"lots\"\n", "s.toml", root_user()),
                       "s.toml:2: disk: 'lots' is not a number", Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("[limits]\ndisk_inodes = 0\n", "s.toml", root_user()),
                       "s.toml:2: 'disk_inodes' must be at least 1", Error);
  Request r;
  r.argv = {"true"};
  SessionFacts facts;
  facts.now_unix = 1;
  LaunchPlan plan = build_plan(r, seat, root_user(), facts);
  CHECK((plan.limits.disk_bytes == 1LL << 30 && plan.limits.disk_inodes == 500 && plan.limits.floor_bytes == 3LL << 30));
  r.disk = "100m";
  r.disk_inodes = 50;
  plan = build_plan(r, seat, root_user(), facts);
  CHECK((plan.limits.disk_bytes == 100LL << 20 && plan.limits.disk_inodes == 50));
  r.disk = "2g";
  CHECK_THROWS_WITH_AS(build_plan(r, seat, root_user(), facts), "--disk: 2g is above the seat's 1g ([limits] disk in s.toml)", Error);
  r.disk = "1g";
  r.disk_inodes = 501;
  CHECK_THROWS_WITH_AS(build_plan(r, seat, root_user(), facts),
                       "--disk-inodes: 501 is above the seat's 500 ([limits] disk_inodes in s.toml)", Error);
}

TEST_CASE("disk: the ticks come sooner as a fast writer nears what it may add, never later than 20 ms") {
  constexpr std::int64_t MiB = 1 << 20;
  CHECK(next_tick_ms(100 * MiB, 0, 20, 20) == 20);         // nothing grew
  CHECK(next_tick_ms(50 * MiB, 0, 20, 20) == 10);          // nothing grew, less room: a fresh writer could fill it in 10 ms
  CHECK(next_tick_ms(10 * MiB, 0, 20, 20) == 4);           // idle ticks at least 4 ms apart: an idle agent near its room
  CHECK(next_tick_ms(1 * MiB, 0, 20, 20) == 4);            //   cannot make the watcher tick every ms for its whole session
  CHECK(next_tick_ms(-3, 0, 20, 20) == 20);                // past the room and not growing: a walk decides, no spin
  CHECK(next_tick_ms(100 * MiB, -5 * MiB, 20, 20) == 20);  // space was freed
  CHECK(next_tick_ms(100 * MiB, 1 * MiB, 20, 20) == 20);   // 2 s from the room at this pace: no hurry
  CHECK(next_tick_ms(100 * MiB, 100 * MiB, 20, 20) == 5);  // page-cache speed (5 GB/s): a quarter of the 20 ms left
  CHECK(next_tick_ms(10 * MiB, 100 * MiB, 20, 20) == 1);   // closer: at least 1 ms
  CHECK(next_tick_ms(0, 1, 20, 20) == 1);                  // at the room already and growing
  CHECK(next_tick_ms(-3, 1, 20, 20) == 1);
  CHECK(next_tick_ms(100 * MiB, 100 * MiB, 0, 20) == 1);   // no time passed: the fastest pace
  CHECK(next_tick_ms(std::int64_t(1) << 62, 1, 20, 20) == 20);  // any room a filesystem has: no overflow
}

TEST_CASE("disk: the pace's room is the budget's, or a filesystem's above its guard band, never inside it") {
  constexpr std::int64_t MiB = 1 << 20;
  Limits l;
  l.disk_bytes = 100 * MiB, l.floor_bytes = 64 * MiB;
  DiskTick t;
  t.exact_bytes = 30 * MiB, t.grown_bytes = 10 * MiB;
  FsRoom wide, narrow, inside;
  wide.free_bytes = 10'000 * MiB, narrow.free_bytes = 64 * MiB + kFloorGuardBytes + 5 * MiB, inside.free_bytes = 70 * MiB;
  CHECK(pace_room(t, {wide}, l) == 60 * MiB);               // the budget's
  CHECK(pace_room(t, {wide, narrow}, l) == 5 * MiB);        // the band is nearer
  CHECK(pace_room(t, {wide, inside}, l) == 60 * MiB);       // inside the band: each growing tick walks already
  t.exact_bytes = 100 * MiB;
  CHECK(pace_room(t, {inside}, l) == -10 * MiB);            // past the budget: the fastest pace
}

TEST_CASE("disk: the watcher walks when the counters could reach the budget, near the floor, or every 10 s") {
  Limits l = limits(100, 50);
  DiskTick t;
  t.since_walk_ms = 20;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::none);
  t.exact_bytes = 60, t.grown_bytes = 40;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::pressed);  // could have reached it: measure exactly
  t.walk_gap_ms = 100;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::pressed);  // at once, however long the last walk took
  t = DiskTick{};
  t.grown_inodes = 50;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::pressed);
  t = DiskTick{};
  t.near_floor = true;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::none);  // near the floor but nobody adds: nothing to decide
  t.grown_bytes = 1;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::pressed);
  t = DiskTick{};
  t.since_walk_ms = 10'000;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::periodic);
  t.walk_gap_ms = 20'000;
  CHECK(must_walk(t, l, 10'000) == WalkNeed::none);  // the periodic walk: not more often than 5 x the last one
}

TEST_CASE("disk: the verdict after a walk") {
  Limits l = limits(100 << 20, 5000);
  using F = FloorState;
  CHECK(disk_verdict(99 << 20, 10, F::clear, l) == "");
  CHECK(disk_verdict(100 << 20, 10, F::clear, l) == "budget");
  CHECK(disk_verdict(0, 5000, F::clear, l) == "budget");
  CHECK(disk_verdict(2 << 20, 0, F::clear, l) == "");
  CHECK(disk_verdict(2 << 20, 0, F::near, l) == "floor");        // added near the floor
  CHECK(disk_verdict(1 << 20, 100, F::near, l) == "");           // within the slack: a quiet neighbour
  CHECK(disk_verdict(0, 101, F::near, l) == "floor");
  CHECK(disk_verdict(2 << 20, 0, F::below, l) == "floor");       // below it, and its files explain it
  CHECK(disk_verdict(0, 0, F::below, l) == "below_floor");       // below it, whatever its walk explains
  CHECK(disk_verdict(100 << 20, 0, F::below, l) == "budget");
  CHECK(disk_verdict(0, 0, F::clear, l, "'w/d': deeper than 128 levels: not walked") == "unmeasured");  // fail closed
  CHECK(disk_verdict(0, 0, F::below, l, "'w/d': deeper than 128 levels: not walked") == "unmeasured");
}

TEST_CASE("disk: the floor before anything exists, in bytes and inodes") {
  Limits l = limits(1, 1);
  FsRoom r;
  r.path = "/ws/a", r.free_bytes = 999, r.free_inodes = 100;
  CHECK(floor_problem({r}, l) ==
        "the filesystem holding '/ws/a' has 999 free, below the seat's disk floor of 1000 ([limits] disk_floor in s.toml); nothing was created");
  r.free_bytes = 1000, r.free_inodes = 9;
  CHECK(floor_problem({r}, l) ==
        "the filesystem holding '/ws/a' has 9 free inodes, below the seat's floor of 10 ([limits] disk_floor_inodes in s.toml); nothing was created");
  r.free_inodes = 10;
  CHECK(floor_problem({r}, l) == "");
}

TEST_CASE("disk: the writable binds, a bind inside another once") {
  LaunchPlan plan;
  plan.mounts = {{"bind", "/ws/a", "/sandbox/workspaces/a", {"rbind", "rw"}},
                 {"bind", "/ws/a/.git/objects", "/x", {"rbind", "rw"}},
                 {"bind", "/ws/ab", "/y", {"rbind", "rw"}},
                 {"bind", "/etc/ro", "/z", {"rbind", "ro"}},
                 {"tmpfs", "tmpfs", "/tmp", {"rw"}}};
  CHECK(writable_dirs(plan) == std::vector<std::string>{"/ws/a", "/ws/ab"});
}

TEST_CASE("disk: gVisor's seat tmpfs binds are memory, not the seat's disk") {
  LaunchPlan plan;
  plan.mounts = {{"bind", "/ws/a", "/sandbox/workspaces/a", {"rbind", "rw"}},
                 {"bind", "/run/s/tmpfs/0", "/sandbox/home", {"rbind", "rw"}}};
  plan.isolation.seat_tmpfs = {{"tmpfs", "/run/s/tmpfs/0", "/sandbox/home", {"size=64m"}}};
  CHECK(writable_dirs(plan) == std::vector<std::string>{"/ws/a"});
}

TEST_CASE("disk: the walk counts blocks and entries, a hard-linked file once, never a link's target") {
  test::TempDir d;
  d.write("a/big", std::string(64 * 1024, 'x'));
  d.write("b", "y");
  REQUIRE(::link(d.s("a/big").c_str(), d.s("a/again").c_str()) == 0);
  REQUIRE(::symlink("/usr", d.s("usr").c_str()) == 0);
  int fd = ::open(d.s().c_str(), O_RDONLY | O_DIRECTORY);
  TreeUsage u = tree_usage({fd}, {"top"}, 1000);
  CHECK(u.inodes == 4);  // a, a/big (a/again is the same inode), b, usr
  CHECK(u.bytes >= 64 * 1024);
  CHECK(u.bytes < 200 * 1024);
  CHECK(u.stopped.empty());
  TreeUsage capped = tree_usage({fd}, {"top"}, 2);
  CHECK(capped.stopped == "'top/a': past 2 entries in this walk: not walked");
  ::close(fd);
}

TEST_CASE("disk: a file with a name outside the walked dirs is not counted, before or after its names here go") {
  test::TempDir d;
  d.write("outside", std::string(256 * 1024, 'o'));
  REQUIRE(::mkdir(d.s("top").c_str(), 0700) == 0);
  REQUIRE(::link(d.s("outside").c_str(), d.s("top/in").c_str()) == 0);
  REQUIRE(::link(d.s("outside").c_str(), d.s("top/again").c_str()) == 0);
  int fd = ::open(d.s("top").c_str(), O_RDONLY | O_DIRECTORY);
  TreeUsage before = tree_usage({fd}, {"top"}, 1000);
  CHECK(before.inodes == 0);
  CHECK(before.bytes < 64 * 1024);  // the dir's own block(s)
  CHECK(before.shared_inodes == 1);
  CHECK(before.shared_bytes >= 256 * 1024);
  REQUIRE(::unlink(d.s("top/in").c_str()) == 0);
  REQUIRE(::unlink(d.s("top/again").c_str()) == 0);
  TreeUsage after = tree_usage({fd}, {"top"}, 1000);
  CHECK(after.bytes == before.bytes);  // nothing was freed: the figure did not drop
  CHECK(after.shared_inodes == 0);
  REQUIRE(::link(d.s("outside").c_str(), d.s("top/in").c_str()) == 0);
  REQUIRE(::unlink(d.s("outside").c_str()) == 0);  // all its names here now: the session's
  TreeUsage own = tree_usage({fd}, {"top"}, 1000);
  CHECK(own.inodes == 1);
  CHECK(own.bytes >= before.bytes + 256 * 1024);
  ::close(fd);
}

TEST_CASE("disk: doctor says how the budget is kept and the room above the floor") {
  SeatConfig seat;
  DoctorCheck c = disk_check("/ws", "ext4", 3LL << 30, 60000, seat);
  CHECK(c.ok);
  CHECK(c.detail ==
        "/ws (ext4): budget 8g / 200000 inodes per session, kept by the launcher's watcher (no quota on this kernel); "
        "3g and 60000 inodes free, floor 2g / 50000: 1g above the floor, 10000 inodes above it");
  CHECK_FALSE(disk_check("/ws", "ext4", 1LL << 30, 60000, seat).ok);
}
