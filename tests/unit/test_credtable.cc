#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "plan/build_plan.h"
#include "credtable/credential.h"
#include "credtable/credtable.h"
#include "base/error.h"
#include "base/request.h"
#include "launcher/lifecycle/home.h"
#include "launcher/podman/spec.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {
CredTable shipped() { return load_credtable(std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml"); }

fs::path make_temp_dir() {
  char tmpl[] = "/tmp/asbx-unit-cred-XXXXXX";
  return fs::path(::mkdtemp(tmpl));
}

struct TempHome {
  fs::path dir = make_temp_dir();
  ~TempHome() { fs::remove_all(dir); }
  void put(const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "{}";
  }
};

// One row per runtime: where its credential lives and where the copy goes.
struct Expected {
  const char* name;
  const char* source_in_home;  // relative to HOME, XDG_CONFIG_HOME unset
  const char* source_in_xdg;   // relative to XDG_CONFIG_HOME when set ("" = unaffected)
  const char* copy_to;
};
const Expected kRows[] = {
    {"codex", ".codex/auth.json", "", "/sandbox/home/.codex/auth.json"},
    {"claude", ".claude/.credentials.json", "", "/sandbox/home/.claude/.credentials.json"},
    {"cursor-agent", ".config/cursor/auth.json", "cursor/auth.json", "/sandbox/home/.config/cursor/auth.json"},
};
}  // namespace

TEST_CASE("every shipped credtable row resolves, XDG_CONFIG_HOME unset and set") {
  CredTable table = shipped();
  CHECK(table.rows.size() == std::size(kRows));
  for (const auto& e : kRows) {
    CAPTURE(e.name);
    const CredRow& row = find_row(table, e.name);
    for (bool xdg : {false, true}) {
      TempHome t;
      UserFacts u;
      u.home = (t.dir / "home").string();
      if (xdg) u.xdg_config_home = (t.dir / "xdg").string();
      fs::path file = xdg && *e.source_in_xdg ? t.dir / "xdg" / e.source_in_xdg : t.dir / "home" / e.source_in_home;
      t.put(file);
      auto creds = resolve_credentials(row, "", "", u);
      REQUIRE(creds.size() == 1);
      CHECK(creds[0].source == file.string());
      CHECK(creds[0].copy_to == e.copy_to);
    }
  }
}

TEST_CASE("cursor-agent's cli-config.json is configuration, never staged") {
  CHECK(find_row(shipped(), "cursor-agent").source == "{config}/cursor/auth.json");
}

TEST_CASE("templates expand ~, {config} and {account}") {
  UserFacts u;
  u.home = "/h";
  CHECK(expand_template("~/.codex/auth.json", u, "") == "/h/.codex/auth.json");
  CHECK(expand_template("{config}/a/{account}/x", u, "work") == "/h/.config/a/work/x");
  u.xdg_config_home = "/x";
  CHECK(expand_template("{config}/a", u, "") == "/x/a");
  CHECK(expand_template("/abs/{account}", u, "me") == "/abs/me");
}

TEST_CASE("--account selects the account template; a bad name is a usage error") {
  TempHome t;
  UserFacts u;
  u.home = t.dir.string();
  t.put(t.dir / ".config/agent-sandbox/accounts/work/codex/auth.json");
  auto creds = resolve_credentials(find_row(shipped(), "codex"), "work", "", u);
  CHECK(creds.at(0).source == (t.dir / ".config/agent-sandbox/accounts/work/codex/auth.json").string());
  CHECK_THROWS_WITH_AS(resolve_credentials(find_row(shipped(), "codex"), "../x", "", u),
                       "--account: '../x' must be 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit",
                       Error);
}

TEST_CASE("a missing or unreadable credential is credential_unresolved, naming runtime and path") {
  UserFacts u;
  u.home = "/nonexistent-home";
  try {
    resolve_credentials(find_row(shipped(), "claude"), "", "", u);
    FAIL("no throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::credential_unresolved);
    CHECK(std::string(e.what()) ==
          "credential for runtime 'claude' does not resolve (No such file or directory): "
          "'/nonexistent-home/.claude/.credentials.json'");
  }
  CHECK_THROWS_WITH(resolve_credentials(find_row(shipped(), "codex"), "", "/etc", u),
                    "credential for runtime 'codex' is not a regular file: '/etc'");
  CHECK_THROWS_WITH(resolve_credentials(find_row(shipped(), "codex"), "", "rel/auth.json", u),
                    "--credential: 'rel/auth.json' must be an absolute path");
}

TEST_CASE("an optional row whose file is absent stages nothing") {
  CredRow row{"opt", "~/.opt/auth.json", "", ".opt/auth.json", {}, false};
  UserFacts u;
  u.home = "/nonexistent-home";
  CHECK(resolve_credentials(row, "", "", u).empty());
}

TEST_CASE("credtable errors name file:line") {
  CHECK_THROWS_WITH(parse_credtable("[[runtime]]\nname = \"x\"\nsource = \"~/a\"\ndestination = \"../a\"\n", "t.toml"),
                    "t.toml:1: runtime 'x': 'destination' must be a relative path inside HOME without '.' or '..'");
  CHECK_THROWS_WITH(parse_credtable("[[runtime]]\nname = \"x\"\nsource = \"rel\"\ndestination = \"a\"\n", "t.toml"),
                    "t.toml:1: runtime 'x': 'source' must start with ~/, {config}/ or /");
  CHECK_THROWS_WITH(parse_credtable("[[runtime]]\nname = \"x\"\ncolour = 1\n", "t.toml"), "t.toml:3: unknown key 'colour'");
  CHECK_THROWS_WITH(parse_credtable("[[runtime]]\nname = \"x\"\nsource = \"/a\"\ndestination = \"a\"\n"
                                    "[[runtime]]\nname = \"x\"\nsource = \"/a\"\ndestination = \"a\"\n", "t.toml"),
                    "t.toml: runtime 'x' appears twice");
  CHECK_THROWS_WITH(find_row(shipped(), "gemini"),
                    ("--runtime: unknown runtime 'gemini' (" + std::string(ASBX_SOURCE_DIR) +
                     "/credtable/credtable.toml has: codex, claude, cursor-agent)").c_str());
}

TEST_CASE("the lookup order: seat config, installed table, source tree") {
  TempHome t;
  std::string installed = (t.dir / "share/credtable.toml").string();
  const std::string source = "/src/credtable/credtable.toml";
  SeatConfig seat;
  seat.credtable = "/etc/x.toml";
  t.put(installed);
  CHECK(credtable_path(seat, installed, source) == "/etc/x.toml");
  seat.credtable.clear();
  CHECK(credtable_path(seat, installed, source) == installed);
  fs::remove(installed);
  CHECK(credtable_path(seat, installed, source) == source);
  CHECK(credtable_path(seat) ==  // the build's own two paths
        credtable_path(seat, ASBX_CREDTABLE_INSTALLED, std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml"));
}

TEST_CASE("credentials are copied into HOME by the launcher: the command is argv as given") {
  LaunchPlan plan;
  plan.argv = {"codex", "exec"};
  plan.credentials = {{"codex", "/h/auth.json", "/sandbox/home/.codex/auth.json"}};
  CHECK(create_body(plan)["command"] == nlohmann::json::array({"codex", "exec"}));
  CHECK(relative_to_home("/sandbox/home/.codex/auth.json") == ".codex/auth.json");
  CHECK(relative_to_home("/sandbox/homex/a") == "");
  CHECK(relative_to_home("/sandbox/home/") == "");
}

TEST_CASE("a runtime puts its credential into the plan as paths and env names, never as a mount") {
  TempHome t;
  t.put(t.dir / "home/.codex/auth.json");
  UserFacts u;
  u.uid = 0;
  u.home = (t.dir / "home").string();
  SeatConfig seat = parse_seat_config("runtime_dir = \"/run/x\"\n", "seat.toml", u);
  Request req;
  req.id = "c1";
  req.runtime = "codex";
  req.argv = {"codex", "--dangerously-bypass-approvals-and-sandbox", "exec"};  // the row requires it
  SessionFacts facts;
  facts.environ = {{"OPENAI_BASE_URL", "http://127.0.0.1:1"}, {"OPENAI_API_KEY", "sk"}, {"ANTHROPIC_BASE_URL", "x"}};
  LaunchPlan plan = build_plan(req, seat, u, facts);
  CHECK(plan.runtime == "codex");
  REQUIRE(plan.credentials.size() == 1);
  CHECK(plan.credentials[0].source == (t.dir / "home/.codex/auth.json").string());
  CHECK(plan.credentials[0].copy_to == "/sandbox/home/.codex/auth.json");
  std::vector<std::string> destinations;
  for (const auto& m : plan.mounts) destinations.push_back(m.destination);
  CHECK(destinations == std::vector<std::string>{"/tmp", "/dev/shm", "/sandbox/home"});
  std::vector<std::string> names;
  for (const auto& kv : plan.env) names.push_back(kv.first);
  CHECK(names == std::vector<std::string>{"PATH", "HOME", "USER", "OPENAI_BASE_URL", "AGENT_SANDBOX_SESSION"});
  CHECK(plan.env.back().second == "c1");
  CHECK(create_body(plan)["command"].back() == "exec");
  req.runtime.clear();
  req.account = "work";
  CHECK_THROWS_WITH(build_plan(req, seat, u, facts), "--account and --credential need --runtime NAME");
}
