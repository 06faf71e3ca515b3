#include <doctest/doctest.h>

#include "plan/config.h"
#include "base/util.h"
#include "plan/build_plan.h"
#include "plan/userns.h"
#include "credtable/env_policy.h"
#include "base/error.h"
#include "base/request.h"
#include "launcher/podman/spec.h"
#include "base/units.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;
using nlohmann::json;

namespace {
SessionFacts plan_facts() {
  SessionFacts f = fixed_facts({{"TERM", "xterm"}, {"LANG", "C.UTF-8"}, {"GITHUB_TOKEN", "secret"}, {"HOME", "/root"},
                                {"LC_ALL", "C"}, {"OPENAI_API_KEY", "sk-x"}, {"EDITOR", "vi"}});
  return f;
}
Request request(std::vector<std::string> argv) {
  Request r;
  r.id = "t1";
  r.argv = std::move(argv);
  return r;
}
}  // namespace

TEST_CASE("the create body pins every confinement setting") {
  // A seat without a user namespace (the range's body: tests/unit/test_userns_range.cc).
  SeatConfig seat = parse_seat_config("socket = \"/s.sock\"\nuser_namespace = \"host\"\n", "seat.toml", root_user());
  LaunchPlan plan = build_plan(request({"codex", "exec"}), seat, root_user(), plan_facts());
  json body = create_body(plan);
  CHECK(body["name"] == "asbx-t1");
  CHECK(body["command"] == json({"codex", "exec"}));
  CHECK(body["cap_drop"] == json({"ALL"}));
  CHECK(body["no_new_privileges"] == true);
  CHECK(body["read_only_filesystem"] == true);
  CHECK(body["init"] == true);
  CHECK(body["stdin"] == true);
  CHECK(body["user"] == "1000:1000");
  CHECK_FALSE(body.contains("userns"));  // the seat said host
  CHECK_FALSE(body.contains("idmappings"));
  CHECK(body["netns"] == json({{"nsmode", "none"}}));
  CHECK(body["ipcns"] == json({{"nsmode", "none"}}));  // no podman /dev/shm on the seat: the plan's tmpfs
  CHECK(body["resource_limits"]["memory"] == json({{"limit", 12LL << 30}, {"swap", 12LL << 30}}));
  CHECK(body["resource_limits"]["pids"] == json({{"limit", 512}}));
  CHECK(body["resource_limits"]["cpu"] == json({{"quota", 400000}, {"period", 100000}, {"shares", 256}}));
  CHECK(body["r_limits"] == json::parse(R"([{"type": "nofile", "soft": 8192, "hard": 8192},
                                             {"type": "nproc", "soft": 4096, "hard": 4096}])"));
  CHECK(body["mounts"] == json::parse(R"([
    {"type": "tmpfs", "source": "tmpfs", "destination": "/tmp",
     "options": ["rw", "size=512m", "nosuid", "nodev", "mode=1777"]},
    {"type": "tmpfs", "source": "tmpfs", "destination": "/dev/shm",
     "options": ["rw", "size=64m", "nosuid", "nodev", "noexec", "mode=1777"]},
    {"type": "tmpfs", "source": "tmpfs", "destination": "/sandbox/home",
     "options": ["rw", "size=512m", "nosuid", "nodev", "mode=0700", "U"]}])"));
  CHECK(body["labels"]["agent-sandbox.session"] == "t1");
  CHECK(body["labels"]["agent-sandbox.launcher-pid"] == "4242");
  CHECK(body["work_dir"] == "/sandbox/home");
  CHECK(plan.socket == "/s.sock");
}

TEST_CASE("rootless plans use keep-id instead of a user") {
  UserFacts u = root_user();
  u.uid = 1500;
  u.gid = 1500;
  u.home = "/home/u";
  LaunchPlan plan = build_plan(request({"true"}), parse_seat_config("", "s", u), u, plan_facts());
  json body = create_body(plan);
  CHECK(body["userns"] == json({{"nsmode", "keep-id"}}));
  CHECK_FALSE(body.contains("idmappings"));
  CHECK(body["user"] == "1500:1500");
  CHECK(plan.socket == "/run/user/1500/podman/podman.sock");
}

TEST_CASE("a rootful session's user namespace: the agent's id is the host's, no other id is") {
  for (std::int64_t agent : {1, 1000, 4242, 65534, 65535}) {
    auto map = rootful_id_map(agent);
    std::int64_t covered = 0;
    for (const auto& m : map) covered += m.size;
    CHECK(covered == kUsernsSize);
    CHECK(host_id_of(map, agent) == agent);
    for (std::int64_t id : {std::int64_t{0}, agent - 1, agent + 1, std::int64_t{65534}})
      if (id >= 0 && id != agent && id < kUsernsSize) CHECK(host_id_of(map, id) == kUsernsHostBase + id);
    CHECK(host_id_of(map, kUsernsSize) == -1);
  }
  LaunchPlan plan;
  for (const char* bad : {"0:0", "1000:0", "65536:1000", "1000", "1000:1000x", "a:b"}) {
    plan.user = bad;
    CHECK_THROWS_WITH(plan_rootful_userns(plan),
                      doctest::Contains("a rootful session's agent must be a uid:gid between 1 and 65535"));
  }
  plan.user = "1000:1001";
  plan_rootful_userns(plan);
  CHECK(host_id_of(plan.gid_map, 1001) == 1001);
  CHECK(host_id_of(plan.gid_map, 1000) == kUsernsHostBase + 1000);
  // Rendered as podman's create body takes it (REST `idmappings`, `userns` private).
  json body = create_body(plan);
  CHECK(body["userns"] == json({{"nsmode", "private"}}));
  CHECK(body["idmappings"]["UIDMap"] == json::parse(R"([{"container_id": 0, "host_id": 1879048192, "size": 1000},
                             {"container_id": 1000, "host_id": 1000, "size": 1},
                             {"container_id": 1001, "host_id": 1879049193, "size": 64535}])"));
}

TEST_CASE("the environment is an allowlist with a secret veto") {
  LaunchPlan plan = build_plan(request({"true"}), parse_seat_config("", "s", root_user()), root_user(), plan_facts());
  std::vector<std::string> names;
  for (const auto& kv : plan.env) names.push_back(kv.first);
  CHECK(names == std::vector<std::string>{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "AGENT_SANDBOX_SESSION"});
  CHECK(is_secret_looking("GITHUB_TOKEN"));
  CHECK(is_secret_looking("SSH_AUTH_SOCK"));
  CHECK(is_secret_looking("my_api_key"));
  CHECK(is_secret_looking("DB_PASSWORD"));
  CHECK_FALSE(is_secret_looking("LANG"));
  CHECK(is_secret_looking("caf\xc3\xa9_token"));  // bytes above 0x7f are left as they are
  CHECK_FALSE(is_secret_looking("caf\xc3\xa9"));
  auto env = container_env({{"MY_TOKEN", "x"}}, {"MY_TOKEN"});  // the veto wins over the allowlist
  std::vector<std::string> kept;
  for (const auto& kv : env) kept.push_back(kv.first);
  CHECK(kept == std::vector<std::string>{"PATH", "HOME", "USER"});
}

TEST_CASE("a command or environment that is not UTF-8 is refused before anything (JSON carries neither)") {
  SeatConfig seat = parse_seat_config("", "s", root_user());
  CHECK(build_plan(request({"echo", "caf\xc3\xa9", "\xe2\x82\xac"}), seat, root_user(), plan_facts()).argv.size() == 3);
  CHECK_THROWS_WITH_AS(build_plan(request({"sh", "-c", "echo $#", "x", "\xff\xfe"}), seat, root_user(), plan_facts()),
                       "argument 4 of the command is not valid UTF-8 (podman's API carries it as JSON text): '??'", Error);
  CHECK_THROWS_WITH_AS(build_plan(request({"a\xc0\xaf" "b"}), seat, root_user(), plan_facts()),  // an overlong '/'
                       "the command is not valid UTF-8 (podman's API carries it as JSON text): 'a??b'", Error);
  SessionFacts facts = plan_facts();
  facts.environ["LANG"] = "C.\xff";
  CHECK_THROWS_WITH_AS(build_plan(request({"true"}), seat, root_user(), facts),
                       "the environment variable 'LANG' passed into the session is not valid UTF-8 (podman's API carries it as JSON text)", Error);
  try {
    build_plan(request({"x", "\xff"}), seat, root_user(), plan_facts());
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
  }
  CHECK(valid_utf8("plain ascii"));
  CHECK(valid_utf8("\xf0\x9f\x98\x80"));
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));  // a surrogate
  CHECK_FALSE(valid_utf8("\xe2\x82"));        // cut short
}

TEST_CASE("limits come from flags over the seat config") {
  SeatConfig seat = parse_seat_config("[limits]\nmemory = \"2g\"\npids = 100\n", "s", root_user());
  Request r = request({"true"});
  r.pids = 64;
  LaunchPlan plan = build_plan(r, seat, root_user(), plan_facts());
  CHECK(plan.limits.memory_bytes == 2LL << 30);
  CHECK(plan.limits.pids == 64);
  r.memory = "1m";
  CHECK_THROWS_WITH_AS(build_plan(r, seat, root_user(), plan_facts()),
                       "--memory: at least 6m is needed to start a container", Error);
  r.memory = "1g";  // a hostile pass: figures the kernel refuses failed at create (205/206) or at a warm claim (209)
  r.pids = 100000000;
  CHECK_THROWS_WITH_AS(build_plan(r, seat, root_user(), plan_facts()),
                       "--pids: at most 4194304 (the kernel's largest pid count)", Error);
  r.pids = 64;
  r.cpus = 0.0001;
  CHECK_THROWS_WITH_AS(build_plan(r, seat, root_user(), plan_facts()), "--cpus: must be at least 0.01 and at most 1024", Error);
}

TEST_CASE("sizes and durations") {
  CHECK(parse_size("12g", "m") == 12LL << 30);
  CHECK(parse_size("512M", "m") == 512LL << 20);
  CHECK(parse_size("100", "m") == 100);
  CHECK_THROWS_WITH_AS(parse_size("g", "--memory"), "--memory: 'g' is not a number", Error);
  CHECK(parse_duration_ms("2s", "t") == 2000);
  CHECK(parse_duration_ms("90", "t") == 90000);
  CHECK(parse_duration_ms("1m", "t") == 60000);
  CHECK(parse_duration_ms("250ms", "t") == 250);
  CHECK_THROWS_WITH_AS(parse_duration_ms("3d", "--timeout"), "--timeout: '3d' has an unknown unit (use ms, s, m or h)",
                       Error);
  CHECK(format_size(12LL << 30) == "12g");
}

TEST_CASE("seat config errors name file and line") {
  CHECK_THROWS_WITH_AS(parse_seat_config("image = \"x\"\nbogus = 1\n", "/etc/s.toml", root_user()),
                       "/etc/s.toml:2: unknown key 'bogus'", Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("[limits]\npids = \"many\"\n", "s.toml", root_user()),
                       "s.toml:2: 'pids' must be an integer", Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("waive_unenforced_limits = 1\n", "s.toml", root_user()),
                       "s.toml:1: 'waive_unenforced_limits' must be true or false", Error);
  CHECK_THROWS_AS(parse_seat_config("x = [\n", "s.toml", root_user()), Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("pool_size = 33\n", "s.toml", root_user()),
                       "s.toml:1: 'pool_size' must be between 0 and 32", Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("pool_size = -1\n", "s.toml", root_user()),
                       "s.toml:1: 'pool_size' must be between 0 and 32", Error);
  CHECK(parse_seat_config("pool_size = 32\n", "s.toml", root_user()).pool_size == 32);
  CHECK_THROWS_WITH_AS(parse_seat_config("pool_tty_size = 33\n", "s.toml", root_user()),
                       "s.toml:1: 'pool_tty_size' must be between 0 and 32", Error);
  CHECK(parse_seat_config("pool_tty_size = 3\n", "s.toml", root_user()).pool_tty_size == 3);
}

TEST_CASE("the waiver comes only from the seat file and is named") {
  SeatConfig seat = parse_seat_config("waive_unenforced_limits = true\n", "/home/u/seat.toml", root_user());
  LaunchPlan plan = build_plan(request({"true"}), seat, root_user(), plan_facts());
  CHECK(plan.waive_unenforced_limits);
  CHECK(plan.waiver_source == "/home/u/seat.toml");
}
