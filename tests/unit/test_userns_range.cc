// user_namespace = "range" (plan/userns.h, docs/DECISIONS.md issue 34): the seat's key, the one-range
// map, HOME and the git tmpfs owned by the agent's host ids on the seat, every other bind staged as an
// idmapped clone, and what is refused.
#include <doctest/doctest.h>

#include <algorithm>

#include "base/error.h"
#include "base/request.h"
#include "launcher/podman/spec.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "plan/isolation.h"
#include "plan/userns.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using nlohmann::json;

namespace {

UserFacts user(unsigned uid) {
  UserFacts u = test::root_user();
  if (uid == 0) return u;
  u.uid = u.gid = uid;
  u.name = "seat";
  u.home = "/home/seat";
  u.xdg_runtime_dir = "/run/user/1500";
  return u;
}

SessionFacts facts() {
  SessionFacts f = test::fixed_facts();
  f.executable = [](const std::string&, FileNeed) { return true; };
  return f;
}

Request request(const std::string& isolation = "") {
  Request r;
  r.id = "u1";
  r.isolation = isolation;
  r.argv = {"true"};
  return r;
}

SeatConfig seat(const std::string& text, unsigned uid = 0) {
  return parse_seat_config("runtime_dir = \"/run/asbx\"\n" + text, "/etc/seat.toml", user(uid));
}

void check_refused(const std::function<void()>& f, ErrorKind kind, const std::string& message) {
  CHECK(test::error_of(f, kind) == message);
}

}  // namespace

TEST_CASE("user namespace: without the key a rootful runc session gets a range, a gVisor one none (the runtime's row)") {
  LaunchPlan runc = build_plan(request(), seat(""), user(0), facts());
  CHECK(runc.isolation.user_namespace == "range");
  CHECK(create_body(runc)["userns"] == json({{"nsmode", "private"}}));
  CHECK(agent_host_ids(runc).uid == 1879049192);
  LaunchPlan gvisor = build_plan(request("gvisor"), seat(""), user(0), facts());
  CHECK(gvisor.isolation.user_namespace == "host");
  CHECK_FALSE(create_body(gvisor).contains("userns"));
  CHECK(seat_user_namespace(seat(""), "runc") == "range");
  CHECK(seat_user_namespace(seat("user_namespace = \"host\"\n"), "runc") == "host");
  CHECK(seat_user_namespace(seat(""), "gvisor") == "host");
}

TEST_CASE("user namespace: a range seat's session is one range; HOME is the agent's host ids' on the seat") {
  LaunchPlan p = build_plan(request(), seat("user_namespace = \"range\"\n"), user(0), facts());
  json body = create_body(p);
  CHECK(body["userns"] == json({{"nsmode", "private"}}));
  CHECK(body["idmappings"]["UIDMap"] == json::parse(R"([{"container_id": 0, "host_id": 1879048192, "size": 65536}])"));
  CHECK(body["idmappings"]["GIDMap"] == body["idmappings"]["UIDMap"]);
  CHECK(body["user"] == "1000:1000");  // the agent's id inside is unchanged
  CHECK(agent_host_ids(p).uid == 0x70000000 + 1000);
  CHECK(container_id_of(p.uid_map, 0x70000000) == 0);  // what a message names: the container's ids
  CHECK(container_id_of(p.uid_map, 0x70000000 + 65535) == 65535);
  CHECK(container_id_of(p.uid_map, 1000) == -1);
  CHECK(p.isolation.user_namespace == "range");
  REQUIRE(p.isolation.seat_tmpfs.size() == 1);
  CHECK(p.isolation.seat_tmpfs[0].options ==
        std::vector<std::string>{"size=512m", "nosuid", "nodev", "mode=0700", "uid=1879049192", "gid=1879049192"});
  CHECK(body["mounts"][0]["destination"] == "/tmp");  // runc's own tmpfs, mode 1777
  CHECK(body["mounts"][1]["destination"] == "/dev/shm");  // the same
  CHECK(body["mounts"][2] == json::parse(R"({"type": "bind", "source": "/run/asbx/u1/tmpfs/0",
                                             "destination": "/sandbox/home", "options": ["rbind", "rw", "nosuid", "nodev"]})"));
  CHECK(p.isolation.idmapped_binds.empty());  // no workspace: nothing of the owner's is bound
}

TEST_CASE("user namespace: a session on the range it claimed (3) has that range's map, HOME owner and kernel ids") {
  SessionFacts f = facts();
  f.userns_slot = 3;
  LaunchPlan p = build_plan(request(), seat(""), user(0), f);
  const std::int64_t base = 0x70000000 + 3 * 65536;
  CHECK(create_body(p)["idmappings"]["UIDMap"] == json::array({{{"container_id", 0}, {"host_id", base}, {"size", 65536}}}));
  CHECK(agent_host_ids(p).uid == base + 1000);
  CHECK(agent_host_ids(p).gid == base + 1000);
  REQUIRE(p.isolation.seat_tmpfs.size() == 1);
  CHECK(p.isolation.seat_tmpfs[0].options.back() == "gid=" + std::to_string(base + 1000));
  f.userns_slot = 1024;
  CHECK(test::error_of([&] { build_plan(request(), seat(""), user(0), f); }, ErrorKind::internal) ==
        "user namespace range 1024 is not one of the seat's 1024");
}

TEST_CASE("user namespace: every bind but the seat tmpfs goes through its idmapped staging") {
  LaunchPlan p;
  p.user = "1000:1000";
  p.session_dir = "/run/asbx/u2";
  p.mounts = {{"tmpfs", "tmpfs", "/tmp", {"rw", "mode=1777"}},
              {"tmpfs", "tmpfs", "/sandbox/home", {"rw", "size=8m", "mode=0700", "U"}},
              {"bind", "/w/ws", "/sandbox/workspaces/ws", {"rbind", "rw"}},
              {"bind", "/w/ws/.git/config", "/sandbox/workspaces/ws/.git/config", {"rbind", "ro"}}};
  plan_range_userns(p, "/etc/seat.toml", 0);
  REQUIRE(p.isolation.idmapped_binds.size() == 2);
  CHECK(p.isolation.idmapped_binds[0] == Mount{"bind", "/w/ws", "/run/asbx/u2/tmpfs/idmap-0", {}});
  CHECK(p.isolation.idmapped_binds[1] == Mount{"bind", "/w/ws/.git/config", "/run/asbx/u2/tmpfs/idmap-1", {}});
  json mounts = create_body(p)["mounts"];
  CHECK(mounts[1]["source"] == "/run/asbx/u2/tmpfs/0");
  CHECK(mounts[2] == json::parse(R"({"type": "bind", "source": "/run/asbx/u2/tmpfs/idmap-0",
                                     "destination": "/sandbox/workspaces/ws", "options": ["rbind", "rw"]})"));
  CHECK(mounts[3]["source"] == "/run/asbx/u2/tmpfs/idmap-1");
  CHECK(p.mounts[2].source == "/w/ws");  // the plan keeps the owner's path: the walks, checks and sweeps read it
}

TEST_CASE("user namespace: rootless keeps keep-id; a host seat and a Pod are unchanged") {
  LaunchPlan rootless = build_plan(request(), seat("user_namespace = \"range\"\n", 1500), user(1500), facts());
  CHECK(create_body(rootless)["userns"] == json({{"nsmode", "keep-id"}}));
  CHECK(rootless.isolation.user_namespace == "keep-id");
  CHECK(rootless.isolation.idmapped_binds.empty());
  LaunchPlan host = build_plan(request(), seat("user_namespace = \"host\"\n"), user(0), facts());
  CHECK_FALSE(create_body(host).contains("userns"));
  CHECK(host.isolation.user_namespace == "host");
  CHECK(agent_host_ids(host).uid == 1000);
  Request pod = request();
  pod.pod_manifest = true;
  CHECK(build_plan(pod, seat("user_namespace = \"range\"\n"), user(0), facts()).uid_map.empty());
}

TEST_CASE("user namespace: a network namespace podman did not make gets /sys masked whole") {
  Request joined = request();
  joined.network = "ns:/run/netns/work";
  LaunchPlan p = build_plan(joined, seat("user_namespace = \"range\"\n"), user(0), facts());
  CHECK(p.isolation.mask_sys);
  json mask = create_body(p)["mask"];
  CHECK(std::find(mask.begin(), mask.end(), "/sys") != mask.end());
  LaunchPlan own = build_plan(request(), seat("user_namespace = \"range\"\n"), user(0), facts());
  json own_mask = create_body(own)["mask"];
  CHECK(std::find(own_mask.begin(), own_mask.end(), "/sys") == own_mask.end());  // none: a sysfs of its own
  LaunchPlan host = build_plan(joined, seat("user_namespace = \"host\"\n"), user(0), facts());
  CHECK_FALSE(host.isolation.mask_sys);
}

TEST_CASE("user namespace: gVisor in one is refused, and the key is checked") {
  check_refused([] { build_plan(request("gvisor"), seat("user_namespace = \"range\"\n"), user(0), facts()); },
                ErrorKind::isolation_unavailable,
                "gVisor (runsc): user_namespace = \"range\" in /etc/seat.toml: the sandbox does not start in a user "
                "namespace on this seat (runsc: \"error setting up chroot\"); nothing was created");
  check_refused([] { seat("user_namespace = \"auto\"\n"); }, ErrorKind::config,
                "/etc/seat.toml:2: user_namespace must be \"host\" or \"range\"");
}
