// Golden files: the whole libpod create body of each representative plan, byte for byte,
// so any change to what reaches podman shows in review as a diff of tests/unit/golden/.
// After an intended change, regenerate them and commit the diff:
//   ASBX_UPDATE_GOLDEN=1 build/unit-tests -tc='golden*'
// A new kind of plan gets its own TEST_CASE and file here.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unistd.h>

#include "plan/config.h"
#include "plan/build_plan.h"
#include "base/fdio.h"
#include "base/request.h"
#include "launcher/podman/spec.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

const std::string kGoldenDir = std::string(ASBX_SOURCE_DIR) + "/tests/unit/golden";
const std::string kCredtable = std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml";
const std::string kTempStandIn = "/golden";  // the temp dir's place in the files

// Fixed facts: the same plan on every machine, at every time.
SessionFacts fixed_facts() {
  SessionFacts f;
  f.now_unix = 1700000000;
  f.pid = 4242;
  f.boot_id = "boot-1";
  f.environ = {{"TERM", "xterm-256color"}, {"LANG", "C.UTF-8"}, {"LC_ALL", "C"}, {"HOME", "/root"},
               {"GITHUB_TOKEN", "secret"}, {"OPENAI_API_KEY", "sk-x"}, {"OPENAI_BASE_URL", "http://127.0.0.1:1"},
               {"EDITOR", "vi"}};
  f.seccomp_default_path = "/usr/share/containers/seccomp.json";  // podman 4.3.1's, as a fixture
  std::ifstream base(std::string(ASBX_SOURCE_DIR) + "/tests/unit/fixtures/seccomp/podman-4.3.1-default.json");
  f.seccomp_default.assign(std::istreambuf_iterator<char>(base), std::istreambuf_iterator<char>());
  return f;
}

UserFacts user(unsigned uid, const std::string& home) {
  UserFacts u;
  u.uid = uid;
  u.gid = uid;
  u.name = uid == 0 ? "root" : "seat";
  u.home = home;
  return u;
}

Request request(const std::string& id, std::vector<std::string> argv) {
  Request r;
  r.id = id;
  r.argv = std::move(argv);
  return r;
}

// A temp dir for the plans that need real files (workspace, git dirs, credential).
struct TempTree {
  fs::path dir;
  TempTree() {
    char tmpl[] = "/tmp/asbx-unit-golden-XXXXXX";
    dir = fs::canonical(::mkdtemp(tmpl));
  }
  ~TempTree() { fs::remove_all(dir); }
  std::string s(const std::string& rel) const { return (dir / rel).string(); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The first line where the two differ, for a readable failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (int line = 1;; ++line) {
    bool more_e = static_cast<bool>(std::getline(e, le)), more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "";
    if (le != la || more_e != more_a)
      return "line " + std::to_string(line) + ":\n  golden: " + (more_e ? le : "<end>") + "\n  actual: " +
             (more_a ? la : "<end>");
  }
}

void check_golden(const std::string& name, const LaunchPlan& plan, const std::string& temp_dir = "") {
  std::string actual = create_body(plan).dump(2) + "\n";
  if (!temp_dir.empty()) actual = replace_all(actual, temp_dir, kTempStandIn);
  std::string path = kGoldenDir + "/" + name + ".json";
  const char* update = std::getenv("ASBX_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path) << actual;
    MESSAGE("wrote " << path);
    return;
  }
  std::optional<std::string> expected = read_text_file(path);
  REQUIRE_MESSAGE(expected.has_value(), path << " is missing; write it with ASBX_UPDATE_GOLDEN=1 build/unit-tests -tc='golden*'");
  if (*expected != actual)
    FAIL_CHECK("the create body differs from " << path << " at " << first_difference(*expected, actual)
                                               << "\nIf the change is intended: ASBX_UPDATE_GOLDEN=1 build/unit-tests "
                                                  "-tc='golden*' and commit the diff of tests/unit/golden/");
}

}  // namespace

TEST_CASE("golden: plain (rootful, no runtime, no workspace)") {
  UserFacts root = user(0, "/root");
  SeatConfig seat = parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\n", "/etc/seat.toml", root);
  check_golden("plain", build_plan(request("g-plain", {"bash", "-c", "echo hi"}), seat, root, fixed_facts()));
}

TEST_CASE("golden: runtime + workspace + git (codex credential, linked worktree)") {
  TempTree t;
  t.write("home/.codex/auth.json", "{}");
  t.write("workspaces/wt1/.git", "gitdir: " + t.s("git/main/.git/worktrees/wt1") + "\n");
  t.write("git/main/.git/worktrees/wt1/commondir", "../..\n");
  t.write("git/main/.git/worktrees/wt1/gitdir", t.s("workspaces/wt1/.git") + "\n");
  for (const char* f : {"objects/info/packs", "refs/heads/main", "logs/HEAD"}) t.write(std::string("git/main/.git/") + f, "");
  UserFacts root = user(0, t.s("home"));
  SeatConfig seat = parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\n"
                                      "runtime_dir = \"/run/agent-sandbox/sessions\"\n"
                                      "workspace_root = \"" + t.s("workspaces") + "\"\n"
                                      "git_roots = [\"" + t.s("git") + "\"]\n"
                                      "credtable = \"" + kCredtable + "\"\n",
                                      "/etc/seat.toml", root);
  Request r = request("g-runtime", {"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "fix it"});
  r.runtime = "codex";
  r.workspace = t.s("workspaces/wt1");
  r.git_mirror = t.s("git/main/.git");
  r.network = "ns:/run/netns/model";
  r.timeout = "10m";
  check_golden("runtime-workspace-git", build_plan(r, seat, root, fixed_facts()), t.dir.string());
}

TEST_CASE("golden: workspace that is a plain clone (tmpfs gitdir, its binds)") {
  TempTree t;
  for (const char* f : {"HEAD", "config", "index", "hooks/pre-commit.sample", "info/exclude", "objects/info/packs",
                        "refs/heads/main", "logs/HEAD"})
    t.write(std::string("workspaces/repo/.git/") + f, "");
  UserFacts root = user(0, t.s("home"));
  SeatConfig seat = parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\n"
                                      "runtime_dir = \"/run/agent-sandbox/sessions\"\n"
                                      "workspace_root = \"" + t.s("workspaces") + "\"\n",
                                      "/etc/seat.toml", root);
  Request r = request("g-clone", {"sh", "-c", "make test"});
  r.workspace = t.s("workspaces/repo");
  check_golden("plain-clone", build_plan(r, seat, root, fixed_facts()), t.dir.string());
}

TEST_CASE("golden: rootless (keep-id, the caller's own uid)") {
  UserFacts u = user(1500, "/home/seat");
  u.xdg_runtime_dir = "/run/user/1500";
  SeatConfig seat = parse_seat_config("[limits]\nmemory = \"2g\"\npids = 256\ncpus = 1.5\n", "/home/seat/seat.toml", u);
  Request r = request("g-rootless", {"claude", "--version"});
  r.tty = true;
  check_golden("rootless", build_plan(r, seat, u, fixed_facts()));
}

TEST_CASE("golden: egress (claude row's endpoints through the door)") {
  TempTree t;
  t.write("home/.claude/.credentials.json", "{}");
  UserFacts root = user(0, t.s("home"));
  SeatConfig seat = parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\ncredtable = \"" + kCredtable +
                                          "\"\n[egress]\nallow = [\"*.anthropic.com\", \"platform.claude.com\"]\n",
                                      "/etc/seat.toml", root);
  Request r = request("g-egress", {"claude", "-p", "hi", "--dangerously-skip-permissions"});
  r.runtime = "claude";
  r.egress = {"default"};
  check_golden("egress", build_plan(r, seat, root, fixed_facts()), t.dir.string());
}

// Inject mode (the default through the wall): the CA's tmpfs and the CLIs' CA variables in the
// create body; the placeholders are made only at staging, so no token is in any of this.
TEST_CASE("golden: egress-inject (claude OAuth through the injecting wall)") {
  TempTree t;
  t.write("home/.claude/.credentials.json",
          R"({"claudeAiOauth":{"accessToken":"sk-ant-oat01-REALREALREALREAL","refreshToken":"sk-ant-ort01-REALREALREAL",)"
          R"("expiresAt":4102444800000,"scopes":["user:inference"],"subscriptionType":"max"}})");
  UserFacts root = user(0, t.s("home"));
  SeatConfig seat = parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\ncredtable = \"" + kCredtable +
                                          "\"\n[egress]\nallow = [\"*.anthropic.com\", \"platform.claude.com\"]\n",
                                      "/etc/seat.toml", root);
  Request r = request("g-egress-inject", {"claude", "-p", "hi", "--dangerously-skip-permissions"});
  r.runtime = "claude";
  r.egress = {"default"};
  LaunchPlan plan = build_plan(r, seat, root, fixed_facts());
  REQUIRE(plan.credentials.size() == 1);
  CHECK(plan.credentials[0].mode == "inject");
  CHECK(plan.egress.inject.size() == 2);
  check_golden("egress-inject", plan, t.dir.string());
  // A wall to none of the row's API hosts has nowhere to put the real token: copy mode.
  r.egress = {"console.anthropic.com"};
  LaunchPlan copy = build_plan(r, seat, root, fixed_facts());
  CHECK(copy.credentials[0].mode == "copy");
  CHECK(copy.egress.inject.empty());
  // The seat config alone turns inject mode off.
  SeatConfig off = parse_seat_config("socket = \"/run/agent-sandbox/podman.sock\"\ncredtable = \"" + kCredtable +
                                         "\"\n[egress]\ninject = false\n", "/etc/seat.toml", root);
  r.egress = {"default"};
  CHECK(build_plan(r, off, root, fixed_facts()).credentials[0].mode == "copy");
}
