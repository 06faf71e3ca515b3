// gVisor (runsc) as the session's wall: the seat's choice, --isolation, the refusals, the create
// body's runtime and the seat tmpfs binds (plan/isolation.h, docs/ISOLATION.md).
#include <doctest/doctest.h>

#include <fstream>

#include "base/error.h"
#include "base/request.h"
#include "launcher/kube/kube.h"
#include "launcher/podman/spec.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "plan/isolation.h"

using namespace asbx;
using nlohmann::json;

namespace {

UserFacts user(unsigned uid) {
  UserFacts u;
  u.uid = uid;
  u.gid = uid;
  u.name = uid == 0 ? "root" : "seat";
  u.home = uid == 0 ? "/root" : "/home/seat";
  u.xdg_runtime_dir = uid == 0 ? "" : "/run/user/1500";
  return u;
}

SessionFacts facts(bool runsc_there = true) {
  SessionFacts f;
  f.now_unix = 1700000000;
  f.pid = 4242;
  f.boot_id = "boot-1";
  f.executable = [runsc_there](const std::string& p, FileNeed) { return runsc_there || p.find("runsc") == std::string::npos; };
  return f;
}

Request request(const std::string& isolation = "") {
  Request r;
  r.id = "g1";
  r.isolation = isolation;
  r.argv = {"true"};
  return r;
}

SeatConfig seat(const std::string& text, unsigned uid = 0) { return parse_seat_config(text, "/etc/seat.toml", user(uid)); }

void check_refused(const std::function<void()>& f, ErrorKind kind, const std::string& message) {
  try {
    f();
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    CHECK(std::string(e.what()) == message);
  }
}

}  // namespace

TEST_CASE("isolation: a runc seat runs runc; --isolation gvisor asks for runsc there") {
  LaunchPlan plain = build_plan(request(), seat(""), user(0), facts());
  CHECK(plain.isolation.wall == "runc");
  CHECK_FALSE(create_body(plain).contains("oci_runtime"));
  CHECK_FALSE(plain.labels.count("agent-sandbox.isolation"));
  LaunchPlan g = build_plan(request("gvisor"), seat(""), user(0), facts());
  CHECK(g.isolation.wall == "gvisor");
  CHECK(g.isolation.platform == "ptrace");
  CHECK(g.isolation.required_by == "--isolation gvisor");
  CHECK(create_body(g)["oci_runtime"] == "/usr/libexec/agent-sandbox/runsc-ptrace");
  CHECK(g.labels.at("agent-sandbox.isolation") == "gvisor");
  CHECK(plain.socket == "/run/podman/podman.sock");
  CHECK(g.socket == "/run/podman/podman-runsc.sock");  // podman 4.3: the runtime is per service
  CHECK(build_plan(request("gvisor"), seat("runsc_socket = \"/r/g.sock\"\n"), user(0), facts()).socket == "/r/g.sock");
  CHECK(plan_json(g)["isolation"]["wall"] == "gvisor");
}

TEST_CASE("isolation: a runsc seat puts every session under gVisor and refuses a weaker wall") {
  SeatConfig s = seat("runtime = \"runsc\"\nrunsc_platform = \"kvm\"\nrunsc_dir = \"/opt/asbx\"\n");
  LaunchPlan p = build_plan(request(), s, user(0), facts());
  CHECK(p.isolation.required_by == "/etc/seat.toml");
  CHECK(create_body(p)["oci_runtime"] == "/opt/asbx/runsc-kvm");
  check_refused([&] { build_plan(request("runc"), s, user(0), facts()); }, ErrorKind::isolation_unavailable,
                "gVisor (runsc): the seat requires it (runtime = \"runsc\" in /etc/seat.toml); --isolation runc "
                "cannot ask for a weaker wall; nothing was created");
  check_refused([&] { build_plan(request("vm"), seat(""), user(0), facts()); }, ErrorKind::usage,
                "--isolation: 'vm' is neither runc nor gvisor");
}

TEST_CASE("isolation: runsc missing, its wrapper missing, a rootless seat, inject mode: 231") {
  SeatConfig s = seat("runtime = \"runsc\"\n");
  check_refused([&] { build_plan(request(), s, user(0), facts(false)); }, ErrorKind::isolation_unavailable,
                "gVisor (runsc): '/usr/bin/runsc' is not installed (apt-get install runsc); nothing was created");
  SessionFacts no_wrapper = facts();
  no_wrapper.executable = [](const std::string& p, FileNeed) { return p == "/usr/bin/runsc"; };
  check_refused([&] { build_plan(request(), s, user(0), no_wrapper); }, ErrorKind::isolation_unavailable,
                "gVisor (runsc): its wrapper '/usr/libexec/agent-sandbox/runsc-ptrace' is missing or not executable "
                "(runsc_dir in /etc/seat.toml); nothing was created");
  check_refused([&] { build_plan(request("gvisor"), seat("", 1500), user(1500), facts()); }, ErrorKind::isolation_unavailable,
                "gVisor (runsc): a guarantee cannot hold: rootless podman: the sandbox and the seat tmpfs the launcher "
                "mounts for HOME need a rootful seat; nothing was created");
  LaunchPlan inject;
  inject.limits.pids = 512;
  inject.credentials.push_back(StagedCredential{"claude", "/c", "/sandbox/home/.claude/.credentials.json", {}, "inject", {}});
  CHECK(gvisor_refusal(inject).find("the end-of-session secret scan (inject mode)") == 0);
}

TEST_CASE("isolation: under gVisor pids.max holds the sandbox's own tasks and ten per process asked for") {
  Request few = request("gvisor");
  few.pids = 64;
  LaunchPlan p = build_plan(few, seat(""), user(0), facts());
  CHECK(p.limits.pids == 64);
  CHECK(p.isolation.sandbox_pids == 96 + 640);
  CHECK(create_body(p)["resource_limits"]["pids"]["limit"] == 736);
  LaunchPlan runc = build_plan(request("runc"), seat(""), user(0), facts());
  CHECK(runc.isolation.sandbox_pids == 0);
  CHECK(create_body(runc)["resource_limits"]["pids"]["limit"] == runc.limits.pids);
}

TEST_CASE("isolation: under gVisor the tmpfs the launcher reaches into is a seat tmpfs bound in") {
  LaunchPlan p = build_plan(request("gvisor"), seat("runtime_dir = \"/run/asbx/sessions\"\n"), user(0), facts());
  json mounts = create_body(p)["mounts"];
  CHECK(mounts[0] == json::parse(R"({"type": "tmpfs", "source": "tmpfs", "destination": "/tmp",
                                     "options": ["rw", "size=512m", "nosuid", "nodev", "mode=1777"]})"));
  CHECK(mounts[1] == json::parse(R"({"type": "tmpfs", "source": "tmpfs", "destination": "/dev/shm",
                                     "options": ["rw", "size=64m", "nosuid", "nodev", "noexec", "mode=1777"]})"));
  CHECK(mounts[2] == json::parse(R"({"type": "bind", "source": "/run/asbx/sessions/g1/tmpfs/0",
                                     "destination": "/sandbox/home", "options": ["rbind", "rw", "nosuid", "nodev"]})"));
  REQUIRE(p.isolation.seat_tmpfs.size() == 1);
  CHECK(p.isolation.seat_tmpfs[0].options ==
        std::vector<std::string>{"size=512m", "nosuid", "nodev", "mode=0700", "uid=1000", "gid=1000"});
}

TEST_CASE("isolation: the seat config's keys are checked") {
  check_refused([] { seat("runtime = \"kata\"\n"); }, ErrorKind::config,
                "/etc/seat.toml:1: runtime must be \"runc\" or \"runsc\"");
  check_refused([] { seat("runsc_platform = \"systrap\"\n"); }, ErrorKind::config,
                "/etc/seat.toml:1: runsc_platform must be \"ptrace\" or \"kvm\"");
}

TEST_CASE("isolation: the Pod asks for the gvisor RuntimeClass") {
  Request r = request("gvisor");
  r.pod_manifest = true;
  LaunchPlan p = build_plan(r, seat(""), user(0), facts(false));  // the cluster's runtime, not the seat's
  CHECK(p.isolation.seat_tmpfs.empty());
  CHECK(kube_yaml(p).find("runtimeClassName: \"gvisor\"") != std::string::npos);
}

TEST_CASE("isolation: the wrappers carry the runsc row's flags") {
  const OciRuntimeRow& row = oci_runtime_row("runsc");
  for (const char* platform : {"ptrace", "kvm"}) {
    std::ifstream in(std::string(ASBX_BINARY_DIR) + "/libexec/agent-sandbox/runsc-" + platform);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string line = "exec " + row.binary + " --platform=" + platform;
    for (const auto& f : row.flags) line += " " + f;
    CHECK(text.find(line + " \"$@\"") != std::string::npos);
  }
  CHECK(guarantee_table().size() >= 10);
}

TEST_CASE("isolation: a gVisor session binds in the compat shim read-only, and refuses without it") {
  LaunchPlan p = build_plan(request("gvisor"), seat("runsc_dir = \"/opt/asbx\"\n"), user(0), facts());
  json mounts = create_body(p)["mounts"];
  std::vector<std::string> ro{"rbind", "ro", "nosuid", "nodev"};
  CHECK(mounts[mounts.size() - 2] == json({{"type", "bind"}, {"source", "/opt/asbx/gvisor-compat.so"},
                                           {"destination", "/usr/lib/agent-sandbox/gvisor-compat.so"}, {"options", ro}}));
  CHECK(mounts.back() == json({{"type", "bind"}, {"source", "/opt/asbx/gvisor-ld.so.preload"},
                               {"destination", "/etc/ld.so.preload"}, {"options", ro}}));
  // The list names the shim where the plan binds it.
  std::ifstream list(ASBX_SOURCE_DIR "/packaging/runsc/gvisor-ld.so.preload");
  std::string line;
  std::getline(list, line);
  CHECK(line == kGvisorShimInContainer);
  // runc sessions have neither.
  for (const auto& m : build_plan(request(), seat(""), user(0), facts()).mounts)
    CHECK(m.destination != "/etc/ld.so.preload");
  SessionFacts no_shim = facts();
  no_shim.executable = [](const std::string& p, FileNeed) { return p.find("gvisor-compat") == std::string::npos; };
  check_refused([&] { build_plan(request(), seat("runtime = \"runsc\"\n"), user(0), no_shim); },
                ErrorKind::isolation_unavailable,
                "gVisor (runsc): its compat shim '/usr/libexec/agent-sandbox/gvisor-compat.so' is missing (runsc_dir in "
                "/etc/seat.toml): without it `ls -l`, `stat` and blocking reads of sockets fail inside; "
                "nothing was created");
}

TEST_CASE("isolation: the compat shim needs only to be readable (the package installs it 0644), runsc and its wrapper executable") {
  std::vector<std::pair<std::string, FileNeed>> asked;
  SessionFacts f = facts();
  f.executable = [&asked](const std::string& p, FileNeed need) {
    asked.emplace_back(p, need);
    return true;
  };
  build_plan(request(), seat("runtime = \"runsc\"\n"), user(0), f);
  CHECK(asked == std::vector<std::pair<std::string, FileNeed>>{
                     {"/usr/bin/runsc", FileNeed::execute},
                     {"/usr/libexec/agent-sandbox/runsc-ptrace", FileNeed::execute},
                     {"/usr/libexec/agent-sandbox/gvisor-compat.so", FileNeed::read}});
}

TEST_CASE("isolation: the sandbox's boot must say the plan's platform and network, else why not") {
  LaunchPlan kvm = build_plan(request(), seat("runtime = \"runsc\"\nrunsc_platform = \"kvm\"\n"), user(0), facts());
  LaunchPlan ptrace = build_plan(request(), seat("runtime = \"runsc\"\n"), user(0), facts());
  CHECK(gvisor_boot_mismatch(ptrace, "ptrace", "host") == "");
  CHECK(gvisor_boot_mismatch(kvm, "kvm", "host") == "");
  CHECK(gvisor_boot_mismatch(kvm, "ptrace", "host") == "ran the sandbox on the ptrace platform, not kvm (runsc_platform)");
  CHECK(gvisor_boot_mismatch(ptrace, "ptrace", "sandbox") == "ran the sandbox with network sandbox, not host");
  CHECK(gvisor_boot_mismatch(ptrace, "", "host") ==
        "did not say which platform and network its sandbox has (its log names none)");
  CHECK(gvisor_boot_mismatch(ptrace, "ptrace", "") ==
        "did not say which platform and network its sandbox has (its log names none)");
}
