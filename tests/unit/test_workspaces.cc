// Where the owner works: several permitted workspace roots, `--workspace .` (the checkout the caller
// stands in), and the runtime row's seed files for a fresh HOME.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>

#include "base/error.h"
#include "base/request.h"
#include "credtable/credtable.h"
#include "mounts/workspace.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;
using asbx::test::TempDir;
namespace fs = std::filesystem;

namespace {

SessionFacts facts(const std::string& cwd) {
  SessionFacts f = fixed_facts();
  f.cwd = cwd;
  return f;
}


}  // namespace

TEST_CASE("workspace roots: several permitted, the default only without a list, overlap refused") {
  SeatConfig none = parse_seat_config("", "seat.toml", root_user());
  CHECK(none.workspace_roots == std::vector<std::string>{"/root/sandbox/workspaces"});
  SeatConfig listed = parse_seat_config("workspace_roots = [\"~/src\", \"/w\"]\n", "seat.toml", root_user());
  CHECK(listed.workspace_roots == std::vector<std::string>{"/root/src", "/w"});
  SeatConfig both = parse_seat_config("workspace_roots = [\"~/src\"]\nworkspace_root = \"/w\"\n", "seat.toml", root_user());
  CHECK(both.workspace_roots == std::vector<std::string>{"/root/src", "/w"});
  CHECK(error_of([] { parse_seat_config("workspace_roots = []\n", "seat.toml", root_user()); }, ErrorKind::config) ==
        "seat.toml:1: 'workspace_roots' names no root");
  TempDir t;
  fs::create_directories(t.dir / "src/proj");
  fs::create_directories(t.dir / "ws/one");
  fs::create_directories(t.dir / "out");
  std::vector<std::string> roots = {t.s("src"), t.s("ws"), t.s("missing")};
  CHECK(plan_workspace(t.s("src/proj"), roots).container_path == "/sandbox/workspaces/proj");
  CHECK(plan_workspace(t.s("ws/one"), roots).host_path == t.s("ws/one"));
  CHECK(error_of([&] { plan_workspace(t.s("out"), roots); }, ErrorKind::workspace_rejected) ==
        "workspace '" + t.s("out") + "' resolves to '" + t.s("out") + "', outside the permitted roots '" + t.s("src") +
            "', '" + t.s("ws") + "'");
  CHECK(error_of([&] { plan_workspace(t.s("src"), roots); }, ErrorKind::workspace_rejected) ==
        "workspace '" + t.s("src") + "' resolves to '" + t.s("src") + "', outside the permitted roots '" + t.s("src") +
            "', '" + t.s("ws") + "'");
  CHECK(error_of([&] { plan_workspace(t.s("src/proj"), {t.s("src"), t.s("src/proj")}); }, ErrorKind::config) ==
        "the seat's workspace roots '" + t.s("src") + "' and '" + t.s("src/proj") +
            "' overlap: a workspace of one would contain the other's");
}

TEST_CASE("--workspace .: the checkout the caller stands in, judged as any workspace") {
  TempDir t;
  for (const char* d : {"objects/info", "refs", "logs"}) fs::create_directories(t.dir / "src/clone/.git" / d);
  t.write("src/clone/.git/HEAD", "ref: refs/heads/main\n");  // what a session accepts as a plain clone
  fs::create_directories(t.dir / "src/clone/lib/deep");
  fs::create_directories(t.dir / "src/linked/sub");
  t.write("src/linked/.git", "gitdir: /elsewhere\n");
  fs::create_directories(t.dir / "src/plain/sub");
  fs::create_directories(t.dir / "out/.git");
  std::vector<std::string> roots = {t.s("src")};
  CHECK(current_checkout(t.s("src/clone/lib/deep"), roots) == t.s("src/clone"));
  CHECK(current_checkout(t.s("src/clone"), roots) == t.s("src/clone"));
  CHECK(current_checkout(t.s("src/linked/sub"), roots) == t.s("src/linked"));
  CHECK(current_checkout(t.s("src/plain/sub"), roots) == t.s("src/plain/sub"));  // no checkout: here, then refused
  CHECK(current_checkout(t.s("out"), roots) == t.s("out"));
  fs::create_directories(t.dir / "out/lib");
  CHECK(current_checkout(t.s("out/lib"), roots) == t.s("out"));  // outside every root: still the checkout
  SeatConfig seat = parse_seat_config("workspace_roots = [\"" + t.s("src") + "\"]\n", "seat.toml", root_user());
  Request r;
  r.id = "dot";
  r.argv = {"true"};
  r.workspace = ".";
  LaunchPlan plan = build_plan(r, seat, root_user(), facts(t.s("src/clone/lib")));
  CHECK(plan.workdir == "/sandbox/workspaces/clone");
  CHECK(error_of([&] { build_plan(r, seat, root_user(), facts(t.s("out"))); }, ErrorKind::workspace_rejected) ==
        "--workspace .: workspace '" + t.s("out") + "' resolves to '" + t.s("out") + "', outside the permitted root '" +
            t.s("src") + "'");
  CHECK(error_of([&] { build_plan(r, seat, root_user(), facts(t.s("src/plain/sub"))); }, ErrorKind::workspace_rejected) ==
        "--workspace .: workspace '" + t.s("src/plain/sub") + "' is nested below '" + t.s("src/plain") +
            "': a workspace must be a direct child of the permitted root '" + t.s("src") +
            "' (one inside another would show one session's files to another)");
}

TEST_CASE("a runtime row's home_seed: constant small files inside HOME, never over the credential") {
  const std::string head = "[[runtime]]\nname = \"x\"\nsource = \"~/.x\"\ndestination = \".x/cred\"\n";
  CredTable t = parse_credtable(head + "home_seed = { \".x.json\" = '{\"done\": true}' }\n", "t.toml");
  CHECK(t.rows[0].home_seed == std::vector<std::pair<std::string, std::string>>{{".x.json", "{\"done\": true}"}});
  CHECK(error_of([&] { parse_credtable(head + "home_seed = { \"../x\" = 'a' }\n", "t.toml"); }, ErrorKind::config) ==
        "t.toml:5: home_seed '../x' must be a relative path inside HOME without '.' or '..'");
  CHECK(error_of([&] { parse_credtable(head + "home_seed = { \".x\" = 'a' }\n", "t.toml"); }, ErrorKind::config) ==
        "t.toml:5: home_seed '.x' would touch the credential copy '.x/cred'");
  CHECK(error_of([&] { parse_credtable(head + "home_seed = { \"a\" = '" + std::string(5000, 'z') + "' }\n", "t.toml"); },
                 ErrorKind::config) == "t.toml:5: home_seed 'a' is longer than 4096 bytes");
  CHECK(error_of([&] { parse_credtable(head + "home_seed = 'x'\n", "t.toml"); }, ErrorKind::config) ==
        "t.toml:5: 'home_seed' must be a table of path = text");
  CredTable shipped = load_credtable(std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml");
  const CredRow& claude = find_row(shipped, "claude");
  CHECK(claude.home_seed == std::vector<std::pair<std::string, std::string>>{{".claude.json", "{\"hasCompletedOnboarding\": true}"}});
}
