#include <doctest/doctest.h>

#include "launcher/podman/cgroup_counters.h"
#include "launcher/podman/cgroup_monitor.h"

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

// A copy of one version's fixture tree plus a /proc/<pid>/cgroup that points into it: the
// monitor runs the same against a v1 and a v2 layout, whatever this host runs.
struct FakeCgroupHost {
  static constexpr long kPid = 4242;
  std::string version;
  std::filesystem::path dir;
  CgroupLocation at;
  explicit FakeCgroupHost(const std::string& v) : version(v) {
    char tmpl[] = "/tmp/asbx-cgroup-test.XXXXXX";
    dir = ::mkdtemp(tmpl);
    std::filesystem::copy(kFixtures + "/cgroup-" + v, dir / "cgroup", std::filesystem::copy_options::recursive);
    std::filesystem::create_directories(dir / "proc" / std::to_string(kPid));
    std::filesystem::copy_file(kFixtures + "/proc-cgroup-" + v, dir / "proc" / std::to_string(kPid) / "cgroup");
    at = locate_cgroup(*read_small_file(kFixtures + "/proc-cgroup-" + v), root());
  }
  ~FakeCgroupHost() { std::filesystem::remove_all(dir); }
  std::string root() const { return (dir / "cgroup").string(); }
  std::string proc() const { return (dir / "proc").string(); }
  // The file whose absence means the cgroup is gone, and the memory peak, in this version.
  std::string oom_file() const { return at.memory + (version == "v1" ? "/memory.oom_control" : "/memory.events"); }
  std::string peak_file() const { return at.memory + (version == "v1" ? "/memory.max_usage_in_bytes" : "/memory.peak"); }
  std::string oom_text(int kills) const {
    std::string n = std::to_string(kills);
    return version == "v1" ? "oom_kill_disable 0\nunder_oom 0\noom_kill " + n + "\n"
                           : "low 0\nhigh 0\nmax 31\noom " + n + "\noom_kill " + n + "\noom_group_kill 0\n";
  }
  // Replaced whole (rename), as the kernel's files never read half-written.
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path + ".new") << text;
    std::filesystem::rename(path + ".new", path);
  }
};

}  // namespace

TEST_CASE("the monitor samples while the cgroup lives and keeps the last reading once it is gone") {
  for (std::string version : {"v1", "v2"}) {
    CAPTURE(version);
    FakeCgroupHost host(version);
    CgroupMonitor monitor(host.root(), host.proc());
    REQUIRE(monitor.start(FakeCgroupHost::kPid, "abc") == "");
    FakeCgroupHost::write(host.oom_file(), host.oom_text(5));
    FakeCgroupHost::write(host.peak_file(), "1073741824\n");
    FakeCgroupHost::write(host.at.pids + "/pids.events", "max 200\n");
    FakeCgroupHost::write(host.at.pids + "/pids.current", "100\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    FakeCgroupHost::write(host.at.pids + "/pids.current", "2\n");
    std::filesystem::remove(host.oom_file());  // the cgroup vanished
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    FakeCgroupHost::write(host.peak_file(), "2147483648\n");  // not read: the cgroup is gone
    KillCounters c = monitor.stop();
    CHECK(c.cgroup_version == version);
    CHECK(c.oom_kills == 5);
    CHECK(c.oom_killed);
    CHECK(c.memory_peak_bytes == 1073741824);
    CHECK(c.pids_refused == 200);
    CHECK(c.pids_peak == 100);
    CHECK(monitor.stop().oom_kills == 5);  // idempotent
  }
}

TEST_CASE("the monitor says why when the process has no cgroup to watch") {
  CgroupMonitor monitor("/nonexistent-root");
  auto mine = locate_cgroup(*read_small_file("/proc/self/cgroup"), "/nonexistent-root");
  CHECK(monitor.start(::getpid(), "") == "cannot read the counters in " + mine.memory);
  CHECK(monitor.stop().cgroup_version == "");  // nothing read, nothing recorded
  CHECK(monitor.start(999999999, "") == "cannot read /proc/999999999/cgroup");
}

TEST_CASE("the monitor refuses a cgroup that is not the container's own") {
  for (std::string version : {"v1", "v2"}) {
    CAPTURE(version);
    FakeCgroupHost host(version);
    CgroupMonitor monitor(host.root(), host.proc());
    CHECK(monitor.start(FakeCgroupHost::kPid, "abc123") ==
          "the container has no cgroup of its own (it runs in " + host.at.memory + ")");
    CHECK(monitor.stop().cgroup_version == "");
  }
}
