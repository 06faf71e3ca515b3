// gc of a gVisor session's seat tmpfs that no container leads to (launcher/lifecycle/seat_tmpfs.h):
// only a whole owner file of another boot or of a launcher that is gone, and never a session a
// listed container still carries.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/session_owner.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

void session_dir(const fs::path& run, const std::string& name, const char* owner) {
  fs::create_directories(run / name / "tmpfs" / "0");
  if (owner) std::ofstream(run / name / "tmpfs" / "owner") << owner;
}

}  // namespace

TEST_CASE("seat tmpfs: gc removes what a gone launcher left, nothing else") {
  fs::path run = fs::temp_directory_path() / ("asbx-stale-" + std::to_string(::getpid()));
  fs::remove_all(run);
  session_dir(run, "alive", "111 100 boot-1\n");
  session_dir(run, "gone", "222 100 boot-1\n");
  session_dir(run, "rebooted", "111 100 boot-0\n");
  session_dir(run, "listed", "222 100 boot-1\n");  // a container carries it: gc's own loop decides
  session_dir(run, "no-owner", nullptr);          // being made: the owner comes before the first mount
  session_dir(run, "not-whole", "222 100");       // being written
  session_dir(run, "odd", "x y z\n");
  fs::create_directories(run / "other" / "tmpfs");
  fs::create_directories(run / "killed-before-create");  // the seccomp listener's dir: its owner at the top
  std::ofstream(run / "killed-before-create" / "owner") << "222 100 boot-1\n";
  fs::create_directory_symlink(run / "gone", run / "link");  // a link is never followed
  auto alive = [](long pid, std::int64_t started) { return pid == 111 && started == 100; };
  std::vector<StaleSeatTmpfs> got = collect_stale_seat_tmpfs(run.string(), {"listed"}, "boot-1", alive);
  std::set<std::string> removed;
  for (const auto& s : got) {
    removed.insert(s.session);
    CHECK(s.started_unix == 100);
    CHECK(s.why == (s.session == "rebooted" ? "the seat rebooted since its launch (boot id boot-0) and no container "
                                              "carries its session"
                                            : "its launcher (pid 222) is gone and no container carries its session"));
  }
  CHECK(removed == std::set<std::string>{"gone", "rebooted", "killed-before-create"});
  for (const char* kept : {"alive", "listed", "no-owner", "not-whole", "odd", "other"}) CHECK(fs::exists(run / kept));
  CHECK_FALSE(fs::exists(run / "gone"));
  CHECK_FALSE(fs::exists(run / "rebooted"));
  CHECK_FALSE(fs::exists(run / "killed-before-create"));
  fs::remove_all(run);
}

TEST_CASE("session dir: only a live launcher other than the plan's own holds it") {
  fs::path run = fs::temp_directory_path() / ("asbx-holder-" + std::to_string(::getpid()));
  fs::remove_all(run);
  LaunchPlan plan;
  plan.session_dir = (run / "s").string();
  plan.labels = {{"agent-sandbox.launcher-pid", "333"}, {"agent-sandbox.started", "100"}, {"agent-sandbox.boot-id", "boot-1"}};
  auto alive = [](long pid, std::int64_t started) { return (pid == 111 || pid == 333) && started == 100; };
  fs::create_directories(run / "s");
  CHECK(session_dir_holder(plan, alive) == 0);  // no owner
  auto owner = [&](const char* text) { std::ofstream(run / "s" / "owner", std::ios::trunc) << text; };
  owner("111 100 boot-1\n");
  CHECK(session_dir_holder(plan, alive) == 111);  // another launcher, alive
  owner("111 100 boot-0\n");
  CHECK(session_dir_holder(plan, alive) == 0);  // of another boot
  owner("222 100 boot-1\n");
  CHECK(session_dir_holder(plan, alive) == 0);  // gone
  owner("111 99 boot-1\n");
  CHECK(session_dir_holder(plan, alive) == 0);  // its pid reused since
  owner("333 100 boot-1\n");
  CHECK(session_dir_holder(plan, alive) == 0);  // the plan's own (a persistent session's supervisor)
  owner("111 100");
  CHECK(session_dir_holder(plan, alive) == 0);  // not whole: being written by a launcher not yet past it
  fs::create_directories(run / "s" / "tmpfs");
  std::ofstream(run / "s" / "tmpfs" / "owner") << "111 100 boot-1\n";
  CHECK(session_dir_holder(plan, alive) == 111);  // a gVisor session's seat tmpfs names it
  fs::remove_all(run);
}
