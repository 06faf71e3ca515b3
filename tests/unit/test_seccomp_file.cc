// The session's seccomp profile file (launcher/lifecycle/seccomp_file.h): the writer holds it
// locked until it is removed, and gc removes only what a launcher that is gone left behind.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>

#include "launcher/lifecycle/seccomp_file.h"
#include "temp_dir.h"

using namespace asbx;
using asbx::test::TempDir;

namespace {

void age(const TempDir& t, const std::string& name, long seconds) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = std::time(nullptr) - seconds;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  REQUIRE(::utimensat(AT_FDCWD, t.s(name).c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

bool exists(const TempDir& t, const std::string& name) {
  struct stat st {};
  return ::lstat(t.s(name).c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("seccomp profile: the writer holds its file locked; gc leaves it, and takes it once the writer is gone") {
  TempDir t;
  SeccompPlan plan;
  plan.path = t.s("seccomp-s1-abc.json");
  plan.text = "{}";
  std::optional<SeccompProfileForCreate> held(std::in_place, plan);
  age(t, "seccomp-s1-abc.json", 3600);
  CHECK(collect_stale_profiles(t.s(), std::time(nullptr)).empty());
  CHECK(exists(t, "seccomp-s1-abc.json"));
  ::close(held->held.release());  // the launcher killed: its lock goes with its fds, the file stays
  CHECK(collect_stale_profiles(t.s(), std::time(nullptr)) == std::vector<std::string>{"seccomp-s1-abc.json"});
  CHECK_FALSE(exists(t, "seccomp-s1-abc.json"));
  held.reset();  // removing what is gone already is nothing
}

TEST_CASE("seccomp profile gc: only old, unlocked regular files of the profile's names") {
  TempDir t;
  for (const char* name : {"seccomp-a-1.json", "seccomp-b-2.json.tmp.x1", "seccomp-c-3.json", "other.json", "seccomp-d"})
    t.write(name, "{}");
  REQUIRE(::symlinkat(t.s("other.json").c_str(), AT_FDCWD, t.s("seccomp-e-5.json").c_str()) == 0);
  for (const char* name : {"seccomp-a-1.json", "seccomp-b-2.json.tmp.x1", "other.json", "seccomp-d", "seccomp-e-5.json"})
    age(t, name, 3600);
  age(t, "seccomp-c-3.json", kStaleProfileSeconds - 5);  // young: its writer may not hold the lock yet
  int locked = ::open(t.s("seccomp-a-1.json").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(::flock(locked, LOCK_EX) == 0);  // a live launcher's
  CHECK(collect_stale_profiles(t.s(), std::time(nullptr)) == std::vector<std::string>{"seccomp-b-2.json.tmp.x1"});
  for (const char* name : {"seccomp-a-1.json", "seccomp-c-3.json", "other.json", "seccomp-d", "seccomp-e-5.json"})
    CHECK_MESSAGE(exists(t, name), name);
  ::close(locked);
  CHECK(collect_stale_profiles(t.s(), std::time(nullptr)) == std::vector<std::string>{"seccomp-a-1.json"});
  CHECK(collect_stale_profiles(t.s() + "/missing", std::time(nullptr)).empty());
}
