#include <doctest/doctest.h>

#include "launcher/doctor/doctor.h"
#include "base/error.h"
#include "preflight/nnp.h"
#include "preflight/spawn.h"
#include "preflight/systemd_run.h"

using namespace asbx;

namespace {

ErrorKind kind_of(const PreflightFacts& f) {
  try {
    decide_preflight(f);
  } catch (const Error& e) {
    return e.kind();
  }
  FAIL("no throw");
  return ErrorKind::internal;
}

PreflightFacts ready_seat() {
  PreflightFacts f;
  f.no_new_privs = true;
  f.uid = 1000;
  f.user = "seat";
  f.linger = true;
  f.xdg_runtime_dir = "/run/user/1000";
  f.bus_socket = true;
  return f;
}

const std::string kWhy = "NoNewPrivs is 1, so rootless podman cannot map its user namespace here and the launcher "
                         "must re-exec through systemd-run --user, but ";

}  // namespace

TEST_CASE("NoNewPrivs is parsed from /proc/self/status") {
  CHECK(parse_no_new_privs("Name:\tx\nSeccomp:\t0\nNoNewPrivs:\t1\nSpeculation_Store_Bypass:\tx\n") == 1);
  CHECK(parse_no_new_privs("NoNewPrivs:\t0\n") == 0);
  CHECK(parse_no_new_privs("Name:\tNoNewPrivs:\t1\nNoNewPrivs:  0") == 0);
  CHECK_THROWS_WITH_AS(parse_no_new_privs("Name:\tx\n"),
                       "/proc/self/status has no NoNewPrivs line (kernel older than 4.10?)", Error);
  CHECK_THROWS_WITH_AS(parse_no_new_privs("NoNewPrivs:\t2\n"), "/proc/self/status: malformed NoNewPrivs line 'NoNewPrivs:\t2'",
                       Error);
}

TEST_CASE("without NoNewPrivs, or as root, the launcher runs here") {
  PreflightFacts f;
  CHECK(decide_preflight(f) == PreflightAction::run_here);
  f.no_new_privs = true;  // uid 0
  CHECK(decide_preflight(f) == PreflightAction::run_here);
  PreflightFacts off = ready_seat();
  off.no_new_privs = false;
  off.linger = false;
  CHECK(decide_preflight(off) == PreflightAction::run_here);
}

TEST_CASE("NoNewPrivs with linger, runtime dir and bus: re-exec") {
  CHECK(decide_preflight(ready_seat()) == PreflightAction::reexec);
}

TEST_CASE("a missing prerequisite fails closed naming the remedy") {
  PreflightFacts f = ready_seat();
  f.linger = false;
  CHECK_THROWS_WITH_AS(decide_preflight(f),
                       (kWhy + "user seat does not linger (no /var/lib/systemd/linger/seat); fix: loginctl enable-linger seat").c_str(),
                       Error);
  CHECK(kind_of(f) == ErrorKind::seat_preflight);
  f = ready_seat();
  f.xdg_runtime_dir = "";
  CHECK_THROWS_WITH_AS(decide_preflight(f),
                       (kWhy + "XDG_RUNTIME_DIR is '', not /run/user/1000; fix: log in through pam_systemd (ssh does) or "
                               "export XDG_RUNTIME_DIR=/run/user/1000").c_str(),
                       Error);
  f = ready_seat();
  f.bus_socket = false;
  CHECK_THROWS_WITH_AS(decide_preflight(f),
                       (kWhy + "the user bus /run/user/1000/bus is missing; fix: install dbus-user-session, then "
                               "loginctl enable-linger seat").c_str(),
                       Error);
  CHECK(kind_of(f) == ErrorKind::seat_preflight);
}

TEST_CASE("a re-exec'd launcher that still sees NoNewPrivs fails, never loops") {
  PreflightFacts f = ready_seat();
  f.reexecd = true;
  CHECK(kind_of(f) == ErrorKind::reexec_loop);
  f.no_new_privs = false;
  CHECK(decide_preflight(f) == PreflightAction::run_here);
}

TEST_CASE("dollars are doubled for systemd 252's ExecStart= expansion") {
  CHECK(escape_dollars("a $HOME ${X} $$ b") == "a $$HOME $${X} $$$$ b");
  CHECK(escape_dollars("no dollars 'quoted' \\ \n") == "no dollars 'quoted' \\ \n");
}

TEST_CASE("the systemd-run command line is exact") {
  ReexecSpec s;
  s.unit = "asbx-run-x1";
  s.exe = "/usr/local/bin/sandbox-run";
  s.args = {"--id", "x1", "--", "sh", "-c", "echo $1", "a b"};
  s.path = "/usr/bin:/bin";
  s.home = "/home/seat";
  s.marker = "/run/user/1000/asbx-reexec-abc";
  s.pass_env = {"LANG", "XDG_RUNTIME_DIR"};
  std::vector<std::string> want = {
      "/usr/bin/systemd-run", "--user", "--wait", "--pipe", "--collect", "--quiet", "--same-dir",
      "--unit=asbx-run-x1", "--setenv=PATH=/usr/bin:/bin", "--setenv=HOME=/home/seat",
      "--setenv=ASBX_REEXEC_MARKER=/run/user/1000/asbx-reexec-abc", "--setenv=ASBX_REEXEC_UNIT=asbx-run-x1",
      "--setenv=LANG", "--setenv=XDG_RUNTIME_DIR", "--", "/usr/local/bin/sandbox-run",
      "--id", "x1", "--", "sh", "-c", "echo $$1", "a b"};
  CHECK(systemd_run_argv(s) == want);
}

TEST_CASE("the environment carried by name: no secrets, no systemd bookkeeping, UTF-8 only") {
  std::vector<std::string> env = {"LANG=C.UTF-8", "OPENAI_API_KEY=sk-1", "GH_TOKEN=x", "PATH=/bin", "HOME=/h",
                                  "INVOCATION_ID=1", "XDG_RUNTIME_DIR=/run/user/1000", "BAD=\xff", "ASBX_REEXEC_MARKER=m",
                                  "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "TERM=xterm"};
  CHECK(reexec_env_names(env) == std::vector<std::string>{"LANG", "TERM", "XDG_RUNTIME_DIR"});
}

TEST_CASE("arguments D-Bus cannot carry are refused before anything runs") {
  CHECK_NOTHROW(check_reexec_args({"ascii", "grüße", "日本", "emoji \xF0\x9F\x98\x80", ""}));
  CHECK_THROWS_WITH_AS(check_reexec_args({"ok", "bad \xC3"}),
                       "argument 2 is not valid UTF-8; the NoNewPrivs re-exec carries arguments over D-Bus, which "
                       "accepts only UTF-8",
                       Error);
  CHECK_THROWS_AS(check_reexec_args({"\xff"}), Error);
}

TEST_CASE("unit names") {
  CHECK(reexec_unit_name("pf-1", 42, "ab12") == "asbx-run-pf-1");
  CHECK(reexec_unit_name("", 42, "ab12") == "asbx-run-42-ab12");
}

TEST_CASE("doctor: subordinate ids and delegated controllers") {
  std::string subuid = "other:100000:65536\nseat:165536:65536\n1000:300000:10\nbroken\n";
  CHECK(subid_count(subuid, "seat", 1000) == 65546);
  CHECK(subid_count(subuid, "nobody", 65534) == 0);
  CHECK(missing_controllers("cpuset cpu io memory pids\n").empty());
  CHECK(missing_controllers("cpu io") == std::vector<std::string>{"memory", "pids"});
}

TEST_CASE("the spawn site runs only systemd-run and systemctl") {
  sigset_t mask;
  sigemptyset(&mask);
  CHECK_THROWS_WITH_AS(spawn_helper({"/bin/sh", "-c", "true"}, mask, false, true),
                       "refusing to run '/bin/sh': the launcher starts only systemd-run and systemctl", Error);
  CHECK_THROWS_AS(spawn_helper({}, mask, false, true), Error);
}
