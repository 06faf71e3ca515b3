#include <doctest/doctest.h>

#include "launcher/cgroup_counters.h"
#include "launcher/cgroup_monitor.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdlib.h>
#include <thread>
#include <unistd.h>

using namespace asbx;

namespace {

const std::string kFixtures = std::string(ASBX_SOURCE_DIR) + "/tests/unit/fixtures";

CgroupLocation fixture_location(const std::string& version) {
  auto proc = read_small_file(kFixtures + "/proc-cgroup-" + version);
  REQUIRE(proc);
  return locate_cgroup(*proc, kFixtures + "/cgroup-" + version);
}

}  // namespace

TEST_CASE("keyed files and single numbers parse; junk is skipped") {
  auto m = parse_keyed("low 0\nhigh 0\nmax 31\noom_kill 3\nbogus x\n");
  CHECK(m.at("max") == 31);
  CHECK(m.at("oom_kill") == 3);
  CHECK(m.count("bogus") == 0);
  CHECK(parse_number("4096\n") == 4096);
  CHECK_FALSE(parse_number("max\n"));
  CHECK_FALSE(parse_number(""));
  CHECK_FALSE(parse_number("-1"));
}

TEST_CASE("v1 (hybrid host): the memory, pids and cpuacct hierarchies are found and read") {
  CgroupLocation at = fixture_location("v1");
  CHECK(at.version == "v1");
  CHECK(at.memory == kFixtures + "/cgroup-v1/memory/libpod_parent/libpod-abc");
  CHECK(at.pids == kFixtures + "/cgroup-v1/pids/libpod_parent/libpod-abc");
  CHECK(at.cpu == kFixtures + "/cgroup-v1/cpuacct/libpod_parent/libpod-abc");
  CgroupSample s = sample_from(at, read_small_file);
  CHECK(s.oom_kills == 2);
  CHECK(s.pids_refused == 188);
  CHECK(s.memory_peak == 67108864);
  CHECK(s.pids_current == 12);
  CHECK(s.pids_peak == -1);  // v1 has no pids.peak: sampled from pids.current
  CHECK(s.cpu_usage_ns == 704517601);
}

TEST_CASE("v2 (production seats): one unified dir, memory.events / memory.peak / pids.peak / cpu.stat") {
  CgroupLocation at = fixture_location("v2");
  CHECK(at.version == "v2");
  CHECK(at.memory ==
        kFixtures + "/cgroup-v2/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-abc.scope/container");
  CHECK(at.pids == at.memory);
  CgroupSample s = sample_from(at, read_small_file);
  CHECK(s.oom_kills == 3);
  CHECK(s.pids_refused == 7);
  CHECK(s.memory_peak == 268435456);
  CHECK(s.pids_peak == 64);
  CHECK(s.cpu_usage_ns == 1'500'000'000);
}

TEST_CASE("combined v1 mounts (cpu,cpuacct) are found under their list name") {
  CgroupLocation at = locate_cgroup("3:cpu,cpuacct:/x\n2:memory:/x\n1:pids:/x\n0::/\n", "/r");
  CHECK(at.version == "v1");
  CHECK(at.cpu == "/r/cpu,cpuacct/x");
  CHECK(at.memory == "/r/memory/x");
}

TEST_CASE("no cgroup line at all locates nothing") {
  CHECK(locate_cgroup("", "/r").version.empty());
  CHECK(locate_cgroup("0::/\n", "/r").memory == "/r");
}

TEST_CASE("a missing cgroup reads as absent counters") {
  CgroupSample s = sample_from({"v2", "/nonexistent", "/nonexistent", "/nonexistent"}, read_small_file);
  CHECK(s.oom_kills == -1);
  CHECK(s.pids_refused == -1);
  CHECK(s.memory_peak == -1);
}

TEST_CASE("folding keeps the largest reading and sets oom_killed") {
  KillCounters c;
  fold_sample(c, {0, 0, 1000, 3, -1, 10});
  fold_sample(c, {1, 5, 800, 9, -1, 20});
  fold_sample(c, {-1, -1, -1, -1, -1, -1});  // a read after the cgroup vanished changes nothing
  CHECK(c.oom_kills == 1);
  CHECK(c.oom_killed);
  CHECK(c.pids_refused == 5);
  CHECK(c.memory_peak_bytes == 1000);
  CHECK(c.pids_peak == 9);
  CHECK(c.cpu_usage_ns == 20);
}

TEST_CASE("cause precedence: the launcher's kill (timeout or signal, whichever came first) > oom > pids > none") {
  KillCounters none, oom, pids, both;
  oom.oom_killed = true;
  oom.oom_kills = 1;
  pids.pids_refused = 4;
  both = oom;
  both.pids_refused = 4;
  CHECK(decide_cause("", none) == "");
  CHECK(decide_cause("", pids) == "pids");
  CHECK(decide_cause("", oom) == "oom");
  CHECK(decide_cause("", both) == "oom");
  CHECK(decide_cause("signal", both) == "signal");
  CHECK(decide_cause("timeout", both) == "timeout");
  KillCounters event_only;  // the v1 eventfd saw an OOM before the counter was read
  event_only.oom_killed = true;
  CHECK(decide_cause("", event_only) == "oom");
}

namespace {

// A fake v1 cgroup tree for this very process, so the monitor can be started on getpid().
struct FakeCgroupRoot {
  std::string root;
  std::string memory, pids;
  FakeCgroupRoot() {
    char tmpl[] = "/tmp/asbx-cgroup-test.XXXXXX";
    root = ::mkdtemp(tmpl);
    auto at = locate_cgroup(*read_small_file("/proc/self/cgroup"), root);
    memory = at.memory;
    pids = at.pids;
    std::filesystem::create_directories(memory);
    std::filesystem::create_directories(pids);
    std::filesystem::create_directories(at.cpu);
    write(memory + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    write(memory + "/memory.max_usage_in_bytes", "1000\n");
    write(pids + "/pids.events", "max 0\n");
    write(pids + "/pids.current", "1\n");
  }
  ~FakeCgroupRoot() { std::filesystem::remove_all(root); }
  static void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
};

}  // namespace

TEST_CASE("the monitor samples while the cgroup lives and keeps the last reading once it is gone") {
  if (locate_cgroup(*read_small_file("/proc/self/cgroup"), "/x").version != "v1") return;  // v1 hosts only
  FakeCgroupRoot fake;
  CgroupMonitor monitor(fake.root);
  REQUIRE(monitor.start(::getpid(), "") == "");
  FakeCgroupRoot::write(fake.memory + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  FakeCgroupRoot::write(fake.memory + "/memory.max_usage_in_bytes", "5000\n");
  FakeCgroupRoot::write(fake.pids + "/pids.events", "max 9\n");
  FakeCgroupRoot::write(fake.pids + "/pids.current", "7\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  FakeCgroupRoot::write(fake.pids + "/pids.current", "2\n");
  std::filesystem::remove(fake.memory + "/memory.oom_control");  // the cgroup vanished
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  KillCounters c = monitor.stop();
  CHECK(c.cgroup_version == "v1");
  CHECK(c.oom_kills == 2);
  CHECK(c.oom_killed);
  CHECK(c.memory_peak_bytes == 5000);
  CHECK(c.pids_refused == 9);
  CHECK(c.pids_peak == 7);
  CHECK(monitor.stop().oom_kills == 2);  // idempotent
}

TEST_CASE("the monitor says why when the process has no cgroup to watch") {
  CgroupMonitor monitor("/nonexistent-root");
  auto mine = locate_cgroup(*read_small_file("/proc/self/cgroup"), "/nonexistent-root");
  CHECK(monitor.start(::getpid(), "") == "cannot read the counters in " + mine.memory);
  CHECK(monitor.stop().cgroup_version == "");  // nothing read, nothing recorded
  CHECK(monitor.start(999999999, "") == "cannot read /proc/999999999/cgroup");
}

TEST_CASE("the monitor refuses a cgroup that is not the container's own") {
  if (locate_cgroup(*read_small_file("/proc/self/cgroup"), "/x").version != "v1") return;
  FakeCgroupRoot fake;
  CgroupMonitor monitor(fake.root);
  CHECK(monitor.start(::getpid(), "abc123") == "the container has no cgroup of its own (it runs in " + fake.memory + ")");
}
