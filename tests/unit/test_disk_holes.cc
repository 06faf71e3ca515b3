// The holes a hostile pass found in the disk wall (docs/THREATS.md): unnamed open files, a walk
// that cannot finish, the verdict at the end, the messages, the ticks' priority.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "launcher/lifecycle/disk_hidden.h"
#include "launcher/lifecycle/disk_usage.h"
#include "launcher/lifecycle/disk_watch.h"
#include "launcher/lifecycle/tick_priority.h"
#include "temp_dir.h"

using namespace asbx;

namespace {

dev_t dev_of(const std::string& path) {
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_dev;
}

Limits small_limits() {
  Limits l;
  l.disk_bytes = 1 << 20, l.disk_inodes = 1000, l.floor_bytes = 1 << 20, l.floor_inodes = 10, l.disk_source = "s.toml";
  return l;
}

}  // namespace

TEST_CASE("disk: files deleted while open and O_TMPFILE files count, named or elsewhere ones do not") {
  test::TempDir d;
  d.write("procs", std::to_string(::getpid()) + "\n");
  std::vector<dev_t> devs{dev_of(d.s())};
  HiddenUsage none = hidden_usage(d.s("procs"), devs);
  int named = ::open(d.s("named").c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(::write(named, std::string(65536, 'n').data(), 65536) == 65536);
  int gone = ::open(d.s("gone").c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(::write(gone, std::string(131072, 'g').data(), 131072) == 131072);
  REQUIRE(::unlink(d.s("gone").c_str()) == 0);
  int tmp = ::open(d.s().c_str(), O_TMPFILE | O_RDWR, 0600);
  REQUIRE(tmp >= 0);
  int again = ::dup(gone);  // the same inode through two fds: once
  HiddenUsage u = hidden_usage(d.s("procs"), devs);
  CHECK(u.error.empty());
  CHECK(u.inodes - none.inodes == 2);
  CHECK(u.bytes - none.bytes >= 131072);
  CHECK(u.bytes - none.bytes < 131072 + 65536);
  CHECK(hidden_usage(d.s("procs"), {dev_of("/proc")}).bytes == 0);  // not a watched filesystem
  CHECK(hidden_usage(d.s("no-such-cgroup"), devs).bytes == 0);      // the cgroup is gone: nothing held
  CHECK(hidden_usage("", devs).bytes == 0);
  for (int fd : {named, gone, tmp, again}) ::close(fd);
}

TEST_CASE("disk: a directory removed while a thread stands in it counts, as long as it stands there") {
  test::TempDir d;
  d.write("procs", std::to_string(::getpid()) + "\n");
  std::vector<dev_t> devs{dev_of(d.s())};
  REQUIRE(::mkdir(d.s("room").c_str(), 0700) == 0);
  HiddenUsage before = hidden_usage(d.s("procs"), devs);
  int entered = -1, leave = 0;
  std::thread t([&] {  // a cwd of its own (CLONE_FS), as a process's would be
    entered = ::unshare(CLONE_FS) == 0 && ::chdir(d.s("room").c_str()) == 0 ? 1 : 0;
    while (!__atomic_load_n(&leave, __ATOMIC_ACQUIRE)) std::this_thread::yield();
  });
  while (__atomic_load_n(&entered, __ATOMIC_ACQUIRE) < 0) std::this_thread::yield();
  REQUIRE(entered == 1);
  REQUIRE(::rmdir(d.s("room").c_str()) == 0);
  HiddenUsage held = hidden_usage(d.s("procs"), devs);
  __atomic_store_n(&leave, 1, __ATOMIC_RELEASE);
  t.join();
  CHECK(held.error.empty());
  CHECK(held.inodes - before.inodes == 1);
  CHECK(hidden_usage(d.s("procs"), devs).inodes == before.inodes);  // the thread is gone: nothing held
}

TEST_CASE("disk: the walk counts the blocks of the dirs it starts from (their names can be gone, the blocks stay)") {
  test::TempDir d;
  std::string name(200, 'n');
  for (int i = 0; i < 3000; ++i) d.write(name + std::to_string(i), "");
  for (int i = 0; i < 3000; ++i) REQUIRE(::unlink(d.s(name + std::to_string(i)).c_str()) == 0);
  int fd = ::open(d.s().c_str(), O_RDONLY | O_DIRECTORY);
  struct stat st{};
  REQUIRE(::fstat(fd, &st) == 0);
  TreeUsage u = tree_usage({fd}, {"top"}, 1000);
  CHECK(u.inodes == 0);  // what is beneath
  CHECK(u.bytes == static_cast<std::int64_t>(st.st_blocks) * 512);  // 3000 long names once: far more than a block on ext4
  ::close(fd);
}

TEST_CASE("disk: a walk the counters press is interrupted, not left to run") {
  test::TempDir d;
  for (int i = 0; i < 3000; ++i) d.write("f" + std::to_string(i), "");
  int fd = ::open(d.s().c_str(), O_RDONLY | O_DIRECTORY);
  int asked = 0;
  TreeUsage u = tree_usage({fd}, {"top"}, 1'000'000, [&] { return ++asked == 2; });
  CHECK(u.interrupted);
  CHECK(u.stopped.empty());
  CHECK(u.inodes < 3000);
  TreeUsage whole = tree_usage({fd}, {"top"}, 1'000'000, [] { return false; });
  CHECK_FALSE(whole.interrupted);
  CHECK(whole.inodes == 3000);
  ::close(fd);
}

TEST_CASE("disk: the messages name the filesystem, the walk's stop, and an ending after the agent") {
  Limits l = small_limits();
  DiskEnding floor{"floor", false, "/srv/ws/a", "", 5 << 20, 3, 0, {"/srv/ws/a"}};
  CHECK(disk_ended_message(floor, l) ==
        "killed: the session wrote on '/srv/ws/a' near the seat's disk floor of 1m / 10 inodes (it had added 5m in 3 inodes; "
        "[limits] disk_floor in s.toml)");
  floor.hidden_bytes = 4 << 20;
  CHECK(disk_ended_message(floor, l) ==
        "killed: the session wrote on '/srv/ws/a' near the seat's disk floor of 1m / 10 inodes (it had added 5m in 3 inodes, "
        "4m of it held open without a name (deleted files or dirs, O_TMPFILE files); [limits] disk_floor in s.toml)");
  DiskEnding deep{"unmeasured", true, "", "'w/d/d': deeper than 128 levels: not walked", 0, 130, 0, {"w"}};
  CHECK(disk_ended_message(deep, l) ==
        "after the agent ended: the workspace could not be measured: 'w/d/d': deeper than 128 levels: not walked; "
        "its disk use counts as over the budget of 1m");
  std::vector<FsRoom> rooms{{"/a", 0, 10LL << 30, 1 << 20, 0, 0}, {"/b", 0, 100 << 20, 1 << 20, 0, 0}};
  CHECK(near_floor_path(rooms, l) == "/b");
  CHECK(below_floor_path(rooms, l) == "");
  rooms[0].free_inodes = 9;
  CHECK(below_floor_path(rooms, l) == "/a");  // in inodes
  rooms[0].free_inodes = 1 << 20, rooms[1].free_bytes = (1 << 20) - 1;
  CHECK(below_floor_path(rooms, l) == "/b");
  rooms[1].free_bytes = 10LL << 30;
  CHECK(near_floor_path(rooms, l) == "");
  DiskEnding below{"below_floor", false, "/srv/ws", "", 0, 0, 0, {"/srv/ws/a"}};
  CHECK(disk_ended_message(below, l) ==
        "killed: the filesystem holding '/srv/ws' fell below the seat's disk floor of 1m / 10 inodes while the session could "
        "write there (its own files: 0 in 0 inodes; the rest is what no walk sees, or another writer's; [limits] disk_floor "
        "in s.toml)");
}

TEST_CASE("disk: the measurement at the end gives its verdict (the agent ended past its budget)") {
  test::TempDir d;
  LaunchPlan plan;
  plan.limits = small_limits();
  plan.mounts.push_back({"bind", d.s(), "/workspace", {"rw"}});
  DiskWatch w;
  w.check_floor(plan);
  int kills = 0;
  w.arm("", "", [&] { ++kills; });
  d.write("big", std::string(3 << 20, 'x'));
  w.stop();
  CHECK(w.ended() == "budget");
  CHECK(w.record()["peak_bytes"].get<std::int64_t>() >= 3 << 20);
  CHECK(w.ended_message().find("reached its disk budget of 1m") != std::string::npos);
  if (kills == 0) {  // the watcher's thread did not see it first: the verdict came after the end
    CHECK(w.record()["ended_after_exit"] == true);
    CHECK(w.ended_message().rfind("after the agent ended: ", 0) == 0);
  }
}

TEST_CASE("tick priority: SCHED_FIFO 1 for the calling thread when granted, normal for a walk, then back") {
  std::string how;
  int during = -1, after = -1, child = -1;
  std::thread t([&] {
    how = raise_tick_priority();
    {
      NormalPriority walk(tick_priority_raised(how));
      during = ::sched_getscheduler(0);
      std::thread([&] { child = ::sched_getscheduler(0); }).join();
    }
    after = ::sched_getscheduler(0);
  });
  t.join();
  if (!tick_priority_raised(how)) {  // not root and no RLIMIT_RTPRIO: said, nothing changed
    CHECK(how.rfind("normal (SCHED_FIFO refused: ", 0) == 0);
    CHECK((during == SCHED_OTHER && after == SCHED_OTHER));
    return;
  }
  CHECK(how == "SCHED_FIFO 1");
  CHECK(during == SCHED_OTHER);
  CHECK(child == SCHED_OTHER);
  CHECK(after == (SCHED_FIFO | SCHED_RESET_ON_FORK));
  CHECK(::sched_getscheduler(0) == SCHED_OTHER);  // another thread's priority is not this one's
}
