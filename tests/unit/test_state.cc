// State collection: the pure rules, the walk over a real directory tree, the export
// stream's reader on hostile input, the config and plan checks (docs/STATE.md).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "credtable/credtable.h"
#include "launcher/podman/container_root.h"
#include "base/error.h"
#include "base/request.h"
#include "launcher/lifecycle/status.h"
#include "launcher/state/collect.h"
#include "launcher/state/frames.h"
#include "state/plan_state.h"
#include "state/rules.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

using asbx::test::TempDir;

void put(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Every file and directory under `root`, relative, sorted, with its mode.
std::vector<std::string> listing(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    struct stat st{};
    ::lstat(e.path().c_str(), &st);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    out.push_back(fs::relative(e.path(), root).string() + (S_ISDIR(st.st_mode) ? "/ " : " ") + mode);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string reason_of(const StateReport& r, const std::string& path) {
  for (const auto& s : r.skipped)
    if (s.path == path) return s.reason;
  return "(not skipped)";
}

UserFacts user_at(const std::string& home) {
  UserFacts u;
  u.home = home;
  return u;
}

}  // namespace

TEST_CASE("state paths: relative inside HOME, never reaching the credential copy") {
  CHECK(is_home_relative_path(".codex/sessions"));
  for (const char* bad : {"", "/abs", "../x", "a/../b", "a//b", "a/", "./a", "a/."}) {
    CAPTURE(bad);
    CHECK_FALSE(is_home_relative_path(bad));
  }
  CHECK(state_credential_conflict(".codex/sessions", ".codex/auth.json") == "");
  CHECK(state_credential_conflict(".codex/auth.json.d", ".codex/auth.json") == "");
  CHECK(state_credential_conflict(".codex/auth.json", ".codex/auth.json") == "is the credential file '.codex/auth.json'");
  CHECK(state_credential_conflict(".codex", ".codex/auth.json") == "contains the credential file '.codex/auth.json'");
  CHECK(state_credential_conflict(".codex/auth.json/x", ".codex/auth.json") ==
        "lies inside the credential file '.codex/auth.json'");
}

TEST_CASE("names and relative paths that could climb out are refused") {
  CHECK(is_safe_name("rollout-2026.jsonl"));
  CHECK(is_safe_name("..."));
  CHECK(is_safe_name("-rf"));
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "a/b", std::string("a\0b", 3), "new\nline", "tab\t", "del\x7f"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_safe_name(bad));
  }
  CHECK(is_safe_relative(".codex/sessions/2026/12/01/rollout.jsonl"));
  for (const char* bad : {"../evil", "/etc/passwd", "a/../../b", "a//b", "a/./b", "a/", "", ".."}) {
    CAPTURE(bad);
    CHECK_FALSE(is_safe_relative(bad));
  }
  CHECK_FALSE(is_safe_relative(std::string(kMaxStatePath + 1, 'a')));
}

TEST_CASE("what a file is, and the caps") {
  CHECK(kind_refusal(S_IFREG | 0755) == "");
  CHECK(kind_refusal(S_IFDIR | 0700) == "");
  CHECK(kind_refusal(S_IFLNK | 0777) == "symlink");
  CHECK(kind_refusal(S_IFIFO | 0600) == "fifo");
  CHECK(kind_refusal(S_IFSOCK | 0600) == "socket");
  CHECK(kind_refusal(S_IFCHR | 0600) == "character device");
  CHECK(kind_refusal(S_IFBLK | 0600) == "block device");
  StateLimits caps{3, 1LL << 20};
  struct stat st{};
  st.st_mode = S_IFREG | 0644;
  st.st_nlink = 1;
  st.st_size = 100;
  CHECK(file_refusal(st, 0, 0, caps) == "");
  st.st_nlink = 2;
  CHECK(file_refusal(st, 0, 0, caps) == "hardlink (2 links)");
  st.st_nlink = 1;
  CHECK(file_refusal(st, 3, 0, caps) == "over the file-count cap (3 files)");
  st.st_size = 2LL << 30;
  CHECK(file_refusal(st, 0, 0, caps) == "over the size cap (2g; 1m of 1m left)");
  CHECK(cap_refusal(1LL << 20, 0, 1, caps) == "over the size cap (1m; 1048575 of 1m left)");
}

TEST_CASE("a credtable row whose state reaches its credential is a config error naming file:line") {
  auto row = [](const std::string& state) {
    return "[[runtime]]\nname = \"x\"\nsource = \"~/.x/auth.json\"\ndestination = \".x/auth.json\"\nstate = " + state + "\n";
  };
  CHECK(parse_credtable(row("[\".x/sessions\"]"), "t.toml").rows[0].state == std::vector<std::string>{".x/sessions"});
  CHECK_THROWS_WITH_AS(parse_credtable(row("[\".x\"]"), "t.toml"),
                       "t.toml:5: runtime 'x': state path '.x' contains the credential file '.x/auth.json'", Error);
  CHECK_THROWS_WITH_AS(parse_credtable(row("[\"logs\", \".x/auth.json\"]"), "t.toml"),
                       "t.toml:5: runtime 'x': state path '.x/auth.json' is the credential file '.x/auth.json'", Error);
  CHECK_THROWS_WITH_AS(parse_credtable(row("[\".x/auth.json/y\"]"), "t.toml"),
                       "t.toml:5: runtime 'x': state path '.x/auth.json/y' lies inside the credential file '.x/auth.json'",
                       Error);
  CHECK_THROWS_WITH_AS(parse_credtable(row("[\"../up\"]"), "t.toml"),
                       "t.toml:5: runtime 'x': state path '../up' must be a relative path inside HOME without '.' or '..'",
                       Error);
  CHECK_THROWS_WITH_AS(parse_credtable(row("\"one\""), "t.toml"), "t.toml:5: 'state' must be an array of strings", Error);
}

TEST_CASE("the shipped rows keep codex's sessions and claude's projects") {
  CredTable t = load_credtable(std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml");
  CHECK(find_row(t, "codex").state == std::vector<std::string>{".codex/sessions"});
  CHECK(find_row(t, "claude").state == std::vector<std::string>{".claude/projects"});
  CHECK(find_row(t, "cursor-agent").state.empty());
}

TEST_CASE("[state] in the seat config: dir, caps, errors with file:line") {
  SeatConfig c = parse_seat_config("[state]\ndir = \"~/kept\"\nmax_files = 50\nmax_bytes = \"8m\"\n", "s.toml", user_at("/h"));
  CHECK(c.state_dir == "/h/kept");
  CHECK(c.state_limits == StateLimits{50, 8LL << 20});
  SeatConfig d = parse_seat_config("", "s.toml", user_at("/h"));
  CHECK(d.state_dir == "");
  CHECK(d.state_limits == StateLimits{10'000, 256LL << 20});
  CHECK_THROWS_WITH_AS(parse_seat_config("[state]\nmax_files = 0\n", "s.toml", user_at("/h")),
                       "s.toml:2: 'max_files' must be at least 1", Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("[state]\nmax_bytes = \"lots\"\n", "s.toml", user_at("/h")),
                       "s.toml:2: max_bytes: 'lots' is not a number", Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("[state]\nkeep = 1\n", "s.toml", user_at("/h")), "s.toml:2: unknown key 'keep'",
                       Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("state = \"/x\"\n", "s.toml", user_at("/h")), "s.toml:1: 'state' must be a table",
                       Error);
}

TEST_CASE("--state-dir: needs a runtime, refuses an existing DIR/<id>, the seat default is quiet") {
  TempDir t;
  SeatConfig seat = parse_seat_config("", "/s.toml", user_at("/h"));
  LaunchPlan plan;
  plan.session_id = "s1";
  Request req;
  req.state_dir = t.dir.string();
  CHECK_THROWS_WITH_AS(plan_state(req, seat, plan),
                       "--state-dir needs --runtime NAME (the runtime's row declares which state to keep)", Error);
  plan.runtime = "codex";
  plan_state(req, seat, plan);
  CHECK(plan.state.dir == t.dir.string());
  CHECK(plan.state.limits == StateLimits{});
  fs::create_directory(t.dir / "s1");
  CHECK_THROWS_WITH_AS(plan_state(req, seat, plan), ("--state-dir: '" + t.dir.string() + "/s1' already exists").c_str(),
                       Error);
  fs::create_symlink("/etc", t.dir / "s2");  // a dangling or planted link counts as existing
  plan.session_id = "s2";
  CHECK_THROWS_AS(plan_state(req, seat, plan), Error);
  Request none;
  seat.state_dir = t.dir.string();
  LaunchPlan bare;
  bare.session_id = "s3";
  plan_state(none, seat, bare);  // no --runtime: the seat's default does not apply, and is no error
  CHECK(bare.state.dir == "");
  bare.runtime = "claude";
  plan_state(none, seat, bare);
  CHECK(bare.state.dir == t.dir.string());
}

TEST_CASE("the walk brings back regular files and directories only, names every skip, normalises modes") {
  TempDir t;
  fs::path home = t.dir / "home";
  fs::path kept = t.dir / "kept";
  std::string secret = "{\"OPENAI_API_KEY\":\"sk-unit-secret\"}";
  put(home / ".codex/auth.json", secret);
  put(home / ".codex/sessions/2026/rollout-1.jsonl", "{\"turn\":1}\n");
  put(home / ".codex/sessions/exec.sh", "#!/bin/sh\n");
  ::chmod((home / ".codex/sessions/exec.sh").c_str(), 04777);
  put(home / ".codex/sessions/evil/copied-secret", secret);
  fs::create_symlink("/etc/shadow", home / ".codex/sessions/evil/shadow");
  fs::create_symlink("../../auth.json", home / ".codex/sessions/evil/cred-link");
  ::mkfifo((home / ".codex/sessions/evil/fifo").c_str(), 0600);
  put(home / ".codex/sessions/evil/original", "linked");
  fs::create_hard_link(home / ".codex/sessions/evil/original", home / ".codex/sessions/evil/hardlink");
  put(home / ".codex/sessions/evil/new\nline", "x");
  { std::ofstream(home / ".codex/sessions/evil/sparse"); }
  fs::resize_file(home / ".codex/sessions/evil/sparse", 2LL << 30);
  fs::create_directories(home / ".codex/sessions/many");
  for (int i = 0; i < 60; ++i) put(home / ".codex/sessions/many" / std::to_string(i), "");
  fs::create_symlink("/", home / ".claude");
  UniqueFd home_fd(::open(home.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));

  StatePlan plan{kept.string(), {".codex/sessions", ".claude/projects", ".cursor/none"}, StateLimits{50, 1LL << 20}};
  CredentialPrint print{static_cast<std::int64_t>(secret.size()), content_digest(secret)};
  StateReport r = collect_state(home_fd.get(), "s1", plan, {print});

  CHECK(r.collected);
  CHECK(r.error == "");
  CHECK(r.dir == (kept / "s1").string());
  CHECK(r.files == 2);
  CHECK(r.bytes == 21);
  CHECK(reason_of(r, ".codex/sessions/evil/copied-secret") == "a copy of a staged credential");
  CHECK(reason_of(r, ".codex/sessions/evil/shadow") == "symlink");
  CHECK(reason_of(r, ".codex/sessions/evil/cred-link") == "symlink");
  CHECK(reason_of(r, ".codex/sessions/evil/fifo") == "fifo");
  CHECK(reason_of(r, ".codex/sessions/evil/original") == "hardlink (2 links)");
  CHECK(reason_of(r, ".codex/sessions/evil/hardlink") == "hardlink (2 links)");
  CHECK(reason_of(r, ".codex/sessions/evil/new\nline") == "a name with a control character");
  CHECK(reason_of(r, ".codex/sessions/evil/sparse") == "over the size cap (2g; 1048565 of 1m left)");
  CHECK(reason_of(r, ".codex/sessions/many") == "more than 50 entries (the file-count cap): not read");
  CHECK(reason_of(r, ".claude/projects") == "a symlink on the way");
  CHECK(r.skipped.size() == 10);
  CHECK(listing(kept) == std::vector<std::string>{
                             "s1/ 0755", "s1/.codex/ 0755", "s1/.codex/sessions/ 0755", "s1/.codex/sessions/2026/ 0755",
                             "s1/.codex/sessions/2026/rollout-1.jsonl 0644", "s1/.codex/sessions/evil/ 0755",
                             "s1/.codex/sessions/exec.sh 0644"});
  CHECK(slurp(kept / "s1/.codex/sessions/2026/rollout-1.jsonl") == "{\"turn\":1}\n");
  CHECK_FALSE(fs::exists(kept / ".s1.partial"));
  CHECK(state_json(r)["skipped"].back() == nlohmann::json{{"path", ".claude/projects"}, {"reason", "a symlink on the way"}});

  StateReport again = collect_state(home_fd.get(), "s1", plan, {print});  // never into an existing tree
  CHECK(again.error == "'" + (kept / "s1").string() + "' already exists");
  CHECK(again.files == 0);
}

TEST_CASE("the walk stops at its budget and at the file-count cap, naming where") {
  TempDir t;
  fs::path home = t.dir / "home";
  for (int d = 0; d < 5; ++d)
    for (int i = 0; i < 400; ++i) put(home / "s" / ("d" + std::to_string(d)) / std::to_string(i), "");
  UniqueFd home_fd(::open(home.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  StateReport r = collect_state(home_fd.get(), "b", StatePlan{(t.dir / "kept").string(), {"s"}, StateLimits{500, 1 << 20}}, {});
  CHECK(r.files == 500);  // all of d0, 100 of d1
  std::size_t over_cap = 0;
  for (const auto& s : r.skipped) over_cap += s.path.rfind("s/d1/", 0) == 0 && s.reason == "over the file-count cap (500 files)";
  CHECK(over_cap == 300);
  // 5 + 400 + 400 names read; d2 would pass the budget of 1000 names: the walk ends there.
  CHECK(reason_of(r, "s/d2") == "the walk's budget of 1000 entries was spent here; the rest was not read");
  CHECK(r.skipped.size() == 301);
  CHECK(reason_of(r, "s/d3") == "(not skipped)");

  StateReport many;
  for (std::size_t i = 0; i < kMaxNamedSkips + 5; ++i) many.skip("f" + std::to_string(i), "fifo");
  CHECK(many.skipped.size() == kMaxNamedSkips);
  CHECK(many.skipped_unnamed == 5);
}

TEST_CASE("the export stream round-trips and the reader keeps hostile names out") {
  TempDir t;
  fs::path src = t.dir / "src";
  put(src / ".codex/sessions/a.jsonl", "alpha");
  put(src / ".codex/sessions/empty", "");
  std::string stream_path = (t.dir / "stream").string();
  {
    UniqueFd out(::open(stream_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    UniqueFd top(::open(src.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    FrameSink sink(out.get());
    StateReport sent;
    walk_state(WalkInput{top.get(), {""}, StateLimits{}, {}}, sink, sent);
    CHECK(sink.finish());
    CHECK(sent.files == 2);
  }
  std::string stream = slurp(stream_path);
  CHECK(stream == "asbx-state 1\nd 6\n.codexd 15\n.codex/sessionsf 23 5\n.codex/sessions/a.jsonlalpha"
                  "f 21 0\n.codex/sessions/emptye\n");

  auto read_into = [&](const std::string& id, const std::string& bytes, StateLimits caps, bool byte_by_byte) {
    StateTree tree;
    REQUIRE(tree.create((t.dir / "out").string(), id) == "");
    StateReport r;
    FrameReader reader(tree, caps, r);
    if (byte_by_byte)
      for (char c : bytes) reader.feed(&c, 1);
    else
      reader.feed(bytes.data(), bytes.size());
    if (r.error.empty() && !reader.complete()) r.error = "incomplete";
    tree.finish();
    return r;
  };
  StateReport whole = read_into("rt", stream, StateLimits{}, true);
  CHECK(whole.error == "");
  CHECK((whole.files == 2 && whole.bytes == 5));
  CHECK(slurp(t.dir / "out/rt/.codex/sessions/a.jsonl") == "alpha");
  CHECK(listing(t.dir / "out/rt") == std::vector<std::string>{".codex/ 0755", ".codex/sessions/ 0755",
                                                                ".codex/sessions/a.jsonl 0644",
                                                                ".codex/sessions/empty 0644"});

  std::string hostile = std::string(kStateStreamMagic) + "f 9 4\n../escapeAAAAf 11 4\n/etc/passwdBBBB" +
                        "d 4\na/..f 12 4\nmissing/fileCCCCf 3 4\nokk1111f 3 4\nokk2222f 3 600\nbig" + std::string(600, 'x') +
                        "e\n";
  StateReport h = read_into("h", hostile, StateLimits{10, 500}, false);
  CHECK(h.error == "");
  CHECK(h.files == 1);
  CHECK(reason_of(h, "../escape") == "a name that could leave the state directory");
  CHECK(reason_of(h, "/etc/passwd") == "a name that could leave the state directory");
  CHECK(reason_of(h, "a/..") == "a name that could leave the state directory");
  CHECK(reason_of(h, "missing/file").rfind("cannot create it here: ", 0) == 0);
  CHECK(reason_of(h, "big") == "over the size cap (600; 496 of 500 left)");
  CHECK(slurp(t.dir / "out/h/okk") == "1111");  // the first of two frames with one name wins
  CHECK(reason_of(h, "okk") == "cannot create it here: File exists");
  CHECK_FALSE(fs::exists(t.dir / "escape"));
  CHECK_FALSE(fs::exists(t.dir / "out/escape"));

  CHECK(read_into("m1", "tar archive\n", StateLimits{}, false).error ==
        "the seat's state stream is malformed at byte 12: not an asbx-state 1 stream");
  CHECK(read_into("m2", std::string(kStateStreamMagic) + "f 3 -1\nabc", StateLimits{}, false).error ==
        "the seat's state stream is malformed at byte 20: an unknown frame header");
  CHECK(read_into("m3", std::string(kStateStreamMagic) + "d 5000\n", StateLimits{}, false).error ==
        "the seat's state stream is malformed at byte 20: a path length out of range");
  CHECK(read_into("m4", std::string(kStateStreamMagic) + "e\nmore", StateLimits{}, false).error ==
        "the seat's state stream is malformed at byte 15: bytes after the end frame");
  CHECK(read_into("m5", std::string(kStateStreamMagic) + "f 1 10\nab", StateLimits{}, false).error == "incomplete");
  CHECK(read_into("m6", std::string(kStateStreamMagic) + std::string(100, 'f'), StateLimits{}, false).error ==
        "the seat's state stream is malformed at byte 78: a header line longer than 64 bytes");
}

TEST_CASE("the record says state: null unless collection ran") {
  LaunchPlan plan;
  SessionResult r;
  CHECK(status_record(plan, r)["state"].is_null());
  r.state.collected = true;
  r.state.dir = "/k/s1";
  r.state.files = 2;
  r.state.bytes = 9;
  r.state.skip(".codex/sessions/x", "fifo");
  CHECK(status_record(plan, r)["state"] ==
        nlohmann::json{{"dir", "/k/s1"}, {"files", 2}, {"bytes", 9},
                       {"skipped", {{{"path", ".codex/sessions/x"}, {"reason", "fifo"}}}}, {"skipped_unnamed", 0},
                       {"error", nullptr}});
}
