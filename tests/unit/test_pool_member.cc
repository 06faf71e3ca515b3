// A warm pool member's body and the stub's spec (launcher/pool/member.h): the member carries nothing
// of a session; a session's plan renders the same digest as a member's of the same seat; the spec
// execs exactly the cold body's command, environment and working dir, every word quoted.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "launcher/pool/member.h"
#include "launcher/podman/spec.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "plan_fixtures.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

SessionFacts facts() {
  SessionFacts f = test::fixed_facts({{"TERM", "xterm"}, {"LANG", "C.UTF-8"}});
  f.seccomp_default_path = "/usr/share/containers/seccomp.json";
  std::ifstream base(std::string(ASBX_SOURCE_DIR) + "/tests/unit/fixtures/seccomp/podman-4.3.1-default.json");
  f.seccomp_default.assign(std::istreambuf_iterator<char>(base), std::istreambuf_iterator<char>());
  return f;
}

struct Tree {
  fs::path dir;
  Tree() {
    char tmpl[] = "/tmp/asbx-unit-member-XXXXXX";
    dir = fs::canonical(::mkdtemp(tmpl));
    fs::create_directories(dir / "workspaces" / "w1");
  }
  ~Tree() { fs::remove_all(dir); }
};

LaunchPlan plan(const Tree& t, const std::string& id, std::vector<std::string> argv, bool workspace, bool tty = false) {
  SeatConfig seat = parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\nuser_namespace = \"host\"\n"
                                      "runtime_dir = \"/run/agent-sandbox/sessions\"\nworkspace_root = \"" +
                                          (t.dir / "workspaces").string() + "\"\n",
                                      "/etc/seat.toml", test::root_user());
  Request r;
  r.id = id;
  r.argv = std::move(argv);
  if (workspace) r.workspace = (t.dir / "workspaces" / "w1").string();
  r.tty = tty;
  return build_plan(r, seat, test::root_user(), facts());
}

}  // namespace

TEST_CASE("pool member: the body carries the stub, PATH alone, no workspace, the two member binds") {
  Tree t;
  nlohmann::json b = member_body(plan(t, "pool-0123456789abcdef", {"/bin/sh"}, false));
  CHECK(b["command"] == nlohmann::json({"/bin/sh", "-c", "read -r go < /sandbox/.claim/go && exec /bin/sh /sandbox/.claim/spec"}));
  CHECK(b["env"] == nlohmann::json({{"PATH", "/usr/local/bin:/usr/bin:/bin"}}));
  CHECK(b["work_dir"] == "/");
  nlohmann::json ws = b["mounts"][b["mounts"].size() - 2], claim = b["mounts"].back();
  CHECK(ws["destination"] == "/sandbox/workspaces");
  CHECK(ws["source"] == "/run/agent-sandbox/sessions/pool-0123456789abcdef/tmpfs/ws");
  CHECK(ws["options"] == nlohmann::json({"rbind", "ro", "nosuid", "nodev", "noexec", "rslave"}));
  CHECK(claim["destination"] == "/sandbox/.claim");
  CHECK(claim["options"] == nlohmann::json({"rbind", "ro", "nosuid", "nodev", "noexec"}));
}

TEST_CASE("pool member: a session with a workspace or other limits has its member's digest; another image does not") {
  Tree t;
  std::string member = member_digest(plan(t, "pool-0123456789abcdef", {"/bin/sh"}, false), "sha256:aaaa");
  LaunchPlan session = plan(t, "s-1", {"codex", "exec", "fix it"}, true);
  CHECK(member_digest(session, "sha256:aaaa") == member);
  CHECK(member_digest(session, "sha256:bbbb") != member);  // the tag rebuilt: another image
  for (const auto& m : member_body(session)["mounts"]) CHECK(m.value("destination", "") != "/sandbox/workspaces/w1");
  session.limits.memory_bytes /= 2;  // --memory, --pids, --cpus: applied at claim (launcher/pool/warm_limits.h)
  session.limits.pids = 7;
  session.limits.cpus = 0.5;
  CHECK(member_digest(session, "sha256:aaaa") == member);
  session.limits.nofile = 64;  // a ulimit is fixed at create
  CHECK(member_digest(session, "sha256:aaaa") != member);
}

// Inject mode warm (docs/DECISIONS.md "Inject mode, warm"): on a seat that keeps a pool every plan
// has the CA's tmpfs, in one place, so the fill's plan and an inject session's render one digest.
TEST_CASE("pool member: on a pool seat every plan has the session CA's tmpfs; an inject session has its member's digest") {
  Tree t;
  fs::create_directories(t.dir / "home/.claude");
  std::ofstream(t.dir / "home/.claude/.credentials.json")
      << R"({"claudeAiOauth":{"accessToken":"sk-ant-oat01-X","refreshToken":"sk-ant-ort01-X","expiresAt":4102444800000}})";
  UserFacts root = test::root_user();
  root.home = (t.dir / "home").string();
  auto seat = [&](const std::string& pool) {
    return parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\nworkspace_root = \"" +
                                 (t.dir / "workspaces").string() + "\"\n" + pool +
                                 "runtime_dir = \"/run/agent-sandbox/sessions\"\ncredtable = \"" + ASBX_SOURCE_DIR +
                                 "/credtable/credtable.toml\"\n[egress]\nallow = [\"*.anthropic.com\", \"platform.claude.com\"]\n",
                             "/etc/seat.toml", root);
  };
  auto ca_mounts = [](const LaunchPlan& p) {
    return std::count_if(p.mounts.begin(), p.mounts.end(), [](const Mount& m) { return m.destination == "/sandbox/ca"; });
  };
  Request fill_req;
  fill_req.id = "pool-0123456789abcdef";
  fill_req.argv = {"/bin/sh"};
  Request r;
  r.id = "s-inject";
  r.argv = {"claude", "-p", "hi", "--dangerously-skip-permissions"};
  r.runtime = "claude";
  r.egress = {"default"};
  // A plain clone on a range seat: its gitdir's tmpfs is a seat tmpfs, numbered like the CA's.
  fs::path git = t.dir / "workspaces" / "w1" / ".git";
  for (const char* d : {"objects/info", "refs", "logs", "hooks"}) fs::create_directories(git / d);
  std::ofstream(git / "HEAD") << "ref: refs/heads/main\n";
  std::ofstream(git / "config") << "[core]\n";
  r.workspace = (t.dir / "workspaces" / "w1").string();
  LaunchPlan fill = build_plan(fill_req, seat("pool_size = 1\n"), root, facts());
  LaunchPlan session = build_plan(r, seat("pool_size = 1\n"), root, facts());
  REQUIRE(!session.egress.inject.empty());
  REQUIRE(session.git.shape == "plain");
  REQUIRE(!session.isolation.seat_tmpfs.empty());
  CHECK(ca_mounts(fill) == 1);
  CHECK(ca_mounts(session) == 1);
  CHECK(member_digest(session, "sha256:aaaa") == member_digest(fill, "sha256:aaaa"));
  // Without a pool only inject mode has it.
  CHECK(ca_mounts(build_plan(fill_req, seat(""), root, facts())) == 0);
  CHECK(ca_mounts(build_plan(r, seat(""), root, facts())) == 1);
}

TEST_CASE("pool member: a terminal session has the digest of a member made with one, never a plain member's") {
  Tree t;
  std::string plain = member_digest(plan(t, "pool-0123456789abcdef", {"/bin/sh"}, false), "sha256:aaaa");
  std::string with_tty = member_digest(plan(t, "pool-0123456789abcdef", {"/bin/sh"}, false, true), "sha256:aaaa");
  CHECK(with_tty != plain);
  LaunchPlan session = plan(t, "s-tty", {"codex"}, true, true);
  CHECK(member_body(session)["terminal"] == true);
  CHECK(member_digest(session, "sha256:aaaa") == with_tty);
  CHECK(member_digest(plan(t, "s-plain", {"codex"}, true), "sha256:aaaa") == plain);
}

TEST_CASE("pool member: a session in a plain clone has its member's digest (its gitdir is the claim's)") {
  Tree t;
  std::string member = member_digest(plan(t, "pool-0123456789abcdef", {"/bin/sh"}, false), "sha256:aaaa");
  fs::path git = t.dir / "workspaces" / "w1" / ".git";
  for (const char* d : {"objects/info", "refs", "logs", "hooks"}) fs::create_directories(git / d);
  std::ofstream(git / "HEAD") << "ref: refs/heads/main\n";
  std::ofstream(git / "config") << "[core]\n";
  LaunchPlan session = plan(t, "s-git", {"git", "status"}, true);
  REQUIRE(session.git.shape == "plain");
  CHECK(member_digest(session, "sha256:aaaa") == member);
  for (const auto& m : member_body(session)["mounts"])
    CHECK(m.value("destination", "").rfind("/sandbox/workspaces/", 0) == std::string::npos);
}

TEST_CASE("pool member: the git roots a member holds: resolved or as written, never /, reserved, nested or /tmp") {
  Tree t;
  fs::create_directories(t.dir / "git" / "inner");
  SeatConfig seat = parse_seat_config(
      "socket = \"/run/agent-sandbox/podman.sock\"\nuser_namespace = \"host\"\npool_size = 2\n"
      "runtime_dir = \"/run/agent-sandbox/sessions\"\nworkspace_root = \"" + (t.dir / "workspaces").string() +
          "\"\ngit_roots = [\"/\", \"/tmp\", \"/etc/git\", \"/usr\", \"" +
          (t.dir / "git").string() + "\", \"" + (t.dir / "git" / "inner").string() + "\", \"/srv/not-made-yet/\"]\n",
      "/etc/seat.toml", test::root_user());
  Request r;
  r.id = "pool-0123456789abcdef";
  r.argv = {"/bin/sh"};
  LaunchPlan p = build_plan(r, seat, test::root_user(), facts());
  CHECK(p.git.member_roots == std::vector<std::string>{(t.dir / "git").string(), "/srv/not-made-yet"});
  nlohmann::json b = member_body(p);
  CHECK(b["mounts"][b["mounts"].size() - 2]["destination"] == "/srv/not-made-yet");
  CHECK(b["mounts"][b["mounts"].size() - 2]["source"] == "/run/agent-sandbox/sessions/pool-0123456789abcdef/tmpfs/git-1");
  r.id = "s-roots";
  r.workspace = (t.dir / "workspaces" / "w1").string();  // a session's plan holds the same roots
  CHECK(build_plan(r, seat, test::root_user(), facts()).git.member_roots == p.git.member_roots);
  seat.pool_size = 0;  // a seat that keeps only members with a terminal: the same roots
  seat.pool_tty_size = 1;
  r.tty = true;
  CHECK(build_plan(r, seat, test::root_user(), facts()).git.member_roots == p.git.member_roots);
}

TEST_CASE("pool member: the spec cds and execs the cold body's command with its environment, quoted") {
  Tree t;
  LaunchPlan p = plan(t, "s-2", {"sh", "-c", "echo 'it''s' $HOME; exit 7"}, true);
  std::string spec = member_spec(p, {"container=podman", "PATH=/from/the/image", "HOSTNAME=agent-sandbox"});
  CHECK(spec.rfind("cd '/sandbox/workspaces/w1' || exit 127\nexec /usr/bin/env -i -- ", 0) == 0);
  CHECK(spec.find(" 'PATH=/usr/local/bin:/usr/bin:/bin' ") != std::string::npos);  // the plan's wins
  CHECK(spec.find("PATH=/from/the/image") == std::string::npos);
  CHECK(spec.find(" 'container=podman' ") != std::string::npos);  // what podman adds stays
  CHECK(spec.find(" 'AGENT_SANDBOX_SESSION=s-2' ") != std::string::npos);
  CHECK(spec.find(" 'sh' '-c' 'echo '\\''it'\\'''\\''s'\\'' $HOME; exit 7'\n") != std::string::npos);
}

TEST_CASE("pool member: a command whose name has '=' is exec'd by sh, which env(1) would take for a variable") {
  Tree t;
  LaunchPlan p = plan(t, "s-3", {"A=B", "it's"}, false);
  std::string spec = member_spec(p, {});
  std::string tail = " /bin/sh -c 'unset PWD; exec \"$0\" \"$@\"' 'A=B' 'it'\\''s'\n";
  REQUIRE(spec.size() > tail.size());
  CHECK(spec.substr(spec.size() - tail.size()) == tail);
  CHECK(member_spec(plan(t, "s-4", {"/bin/A", "B=C"}, false), {}).find("/bin/sh -c") == std::string::npos);
  CHECK(test::error_of([&] { p.argv.clear(); member_spec(p, {}); }, ErrorKind::internal) == "warm pool: the plan has no command");
}
