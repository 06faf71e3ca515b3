// Network modes and the inner-sandbox rule: pure policy for running real agents.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include "plan/build_plan.h"
#include "credtable/credtable.h"
#include "credtable/inner_sandbox.h"
#include "base/error.h"
#include "plan/network.h"
#include "base/request.h"
#include "launcher/podman/spec.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;
using nlohmann::json;

namespace {
LaunchPlan plan_for(Request r, const std::string& seat_text = "") {
  r.id = "a1";
  return build_plan(r, parse_seat_config(seat_text, "seat.toml", root_user()), root_user(), SessionFacts{});
}
const CredRow& row(const std::string& name) {
  static const CredTable table = load_credtable(std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml");
  return find_row(table, name);
}
Request with_network(std::string network) {
  Request r;
  r.argv = {"true"};
  r.network = std::move(network);
  return r;
}
}  // namespace

TEST_CASE("network modes map to libpod netns objects") {
  CHECK(parse_network("none", "--network") == NetworkMode{"none", ""});
  CHECK(parse_network("slirp4netns", "--network") == NetworkMode{"slirp4netns", ""});
  CHECK(parse_network("ns:/run/netns/model", "--network") == NetworkMode{"path", "/run/netns/model"});
  CHECK(parse_network("container:mock-1", "--network") == NetworkMode{"container", "mock-1"});
  CHECK(netns_json({"path", "/run/netns/m"}) == json({{"nsmode", "path"}, {"value", "/run/netns/m"}}));
  CHECK(netns_json({"none", ""}) == json({{"nsmode", "none"}}));
  CHECK(create_body(plan_for(with_network("ns:/run/netns/m")))["netns"] ==
        json({{"nsmode", "path"}, {"value", "/run/netns/m"}}));
  CHECK(plan_for(with_network("ns:/run/netns/m")).network == "ns:/run/netns/m");
}

TEST_CASE("refused network modes are usage errors naming the flag") {
  const char* accepted = "use none, ns:/run/netns/NAME, container:NAME or slirp4netns";
  CHECK_THROWS_WITH_AS(plan_for(with_network("host")),
                       ("--network: 'host' is refused: it would give the agent the seat's own network stack; " +
                        std::string(accepted)).c_str(), Error);
  CHECK_THROWS_WITH_AS(plan_for(with_network("bridge")),
                       ("--network: 'bridge' is not a network mode: " + std::string(accepted)).c_str(), Error);
  for (const char* bad : {"ns:", "ns:run/netns/x", "ns:/run/../etc", "ns:/run/netns/", "ns:/run//x", "ns:/./x"})
    CHECK_THROWS_WITH_AS(plan_for(with_network(bad)),
                         ("--network: '" + std::string(bad) +
                          "' needs an absolute namespace path without '.' or '..' (e.g. ns:/run/netns/NAME)").c_str(),
                         Error);
  for (const char* bad : {"container:", "container:-x", "container:a/b"})
    CHECK_THROWS_WITH_AS(plan_for(with_network(bad)),
                         ("--network: '" + std::string(bad) + "' needs a container name or id (letters, digits, - _ .)")
                             .c_str(), Error);
  try {
    plan_for(with_network("host"));
    FAIL("accepted host");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
  }
}

TEST_CASE("the seat config's network is checked with file:line") {
  CHECK(plan_for(Request{.argv = {"true"}}, "network = \"container:proxy\"\n").network == "container:proxy");
  try {
    parse_seat_config("image = \"x\"\nnetwork = \"host\"\n", "/etc/seat.toml", root_user());
    FAIL("accepted host");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
    CHECK(std::string(e.what()) ==
          "/etc/seat.toml:2: network: 'host' is refused: it would give the agent the seat's own network stack; "
          "use none, ns:/run/netns/NAME, container:NAME or slirp4netns");
  }
}

TEST_CASE("the inner sandbox must be turned off by the user's own argv") {
  const CredRow& codex = row("codex");
  const CredRow& claude = row("claude");
  CHECK(inner_sandbox_state(row("cursor-agent"), {"cursor-agent", "-p", "x"}) == "n/a");
  CHECK(inner_sandbox_state(codex, {"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "p"}) ==
        "off: --dangerously-bypass-approvals-and-sandbox");
  CHECK(inner_sandbox_state(codex, {"/usr/local/bin/codex", "exec", "-s", "danger-full-access", "p"}) ==
        "off: -s danger-full-access");
  CHECK(inner_sandbox_state(codex, {"codex", "--sandbox=danger-full-access"}) == "off: --sandbox danger-full-access");
  CHECK(inner_sandbox_state(claude, {"claude", "-p", "x", "--dangerously-skip-permissions"}) ==
        "off: --dangerously-skip-permissions");
  CHECK(inner_sandbox_state(claude, {"claude", "--permission-mode", "bypassPermissions", "-p", "x"}) ==
        "off: --permission-mode bypassPermissions");
  CHECK(inner_sandbox_state(codex, {"codex", "--version"}) == "n/a: informational");
  CHECK(inner_sandbox_state(codex, {"bash", "-c", "codex exec x"}) == "unchecked: argv[0] is not codex");
  CHECK_THROWS_WITH_AS(inner_sandbox_state(codex, {"codex", "exec", "-s", "workspace-write", "p"}),
                       "--runtime codex: codex's own sandbox (bwrap) cannot map uids inside the container and codex "
                       "then exits 0 having done nothing; the container is the sandbox: add "
                       "'--dangerously-bypass-approvals-and-sandbox' or '--sandbox danger-full-access' or "
                       "'-s danger-full-access' to the command", Error);
  // A prompt after "--" is not a flag.
  CHECK_THROWS_WITH_AS(inner_sandbox_state(claude, {"claude", "-p", "--", "--dangerously-skip-permissions"}),
                       "--runtime claude: claude would stop at a permission prompt for every tool call inside the "
                       "container; the container is the sandbox: add '--dangerously-skip-permissions' or "
                       "'--permission-mode bypassPermissions' to the command", Error);
}

TEST_CASE("a row with inner_sandbox_off needs its reason") {
  CHECK_THROWS_WITH_AS(parse_credtable("[[runtime]]\nname = \"x\"\nsource = \"~/a\"\ndestination = \"a\"\n"
                                       "inner_sandbox_off = [\"--yolo\"]\n", "t.toml"),
                       "t.toml:1: runtime 'x': 'inner_sandbox_off' needs 'inner_sandbox_why'", Error);
  CredTable t = parse_credtable("[[runtime]]\nname = \"x\"\nsource = \"~/a\"\ndestination = \"a\"\n", "t.toml");
  CHECK(t.rows[0].command == "x");
}

TEST_CASE("the plan records the inner sandbox state before resolving credentials") {
  char dir[] = "/tmp/asbx-unit-agents-XXXXXX";
  REQUIRE(::mkdtemp(dir));
  std::string cred = std::string(dir) + "/auth.json";
  std::ofstream(cred) << "{}";
  Request r;
  r.argv = {"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "hi"};
  r.runtime = "codex";
  r.credential = cred;
  CHECK(plan_for(r).inner_sandbox == "off: --dangerously-bypass-approvals-and-sandbox");
  r.runtime = "";
  r.credential = "";
  CHECK(plan_for(r).inner_sandbox == "n/a");
  r.runtime = "claude";
  r.credential = "/nonexistent/credentials.json";
  r.argv = {"claude", "-p", "hi"};
  try {
    plan_for(r);
    FAIL("accepted claude without the bypass flag");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);  // not credential_unresolved: the argv is checked first
  }
  std::remove(cred.c_str());
  ::rmdir(dir);
}
