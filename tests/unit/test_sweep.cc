// The sweep after the agent (launcher/gitguard/walk.h, quarantine.h) and the one escaping function
// for agent-controlled bytes (base/util.h printable): a limit skips a subtree, never the rest, and
// what it skips is set aside; no byte of a hostile name reaches a terminal or the record raw.
// The real sessions are tests/integration/test_sweep.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "base/git_report.h"
#include "base/util.h"
#include "gitscan/advice.h"
#include "launcher/gitguard/quarantine.h"
#include "launcher/gitguard/scan.h"
#include "launcher/lifecycle/diagnostics.h"
#include "plan/config.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;
using asbx::test::TempDir;

namespace {

// OSC 52 (clipboard), a title, erase-line + CR, a newline and a forged launcher line, C1 CSI, bidi.
const std::string kHostile = "x\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b]0;owned\x07\x1b[2K\r\nagent-sandbox: all checks passed"
                             "\xc2\x9b" "31m\xe2\x80\xae\x7f\xff";

bool clean(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c == 0xff) return false;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0) return false;  // C1
    if (s.compare(i, 3, "\xe2\x80\xae") == 0) return false;
  }
  return true;
}

std::string deep(const fs::path& base, int levels) {
  fs::path p = base;
  for (int i = 0; i < levels; ++i) p /= "a";
  fs::create_directories(p);
  return p.string();
}

int open_dir(const fs::path& p) { return ::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); }

}  // namespace

TEST_CASE("printable: the one escaping function keeps text and visible UTF-8, turns every control into '?'") {
  std::string out = printable(kHostile);
  CHECK(clean(out));
  CHECK(out.find('\n') == std::string::npos);
  CHECK(out == "x?]52;c;ZWNobyBwd25lZA==??]0;owned??[2K??agent-sandbox: all checks passed??31m?????");
  CHECK(printable("caf\xc3\xa9 \xe2\x80\xa6") == "caf\xc3\xa9 \xe2\x80\xa6");  // é and … stay
  CHECK(printable("\xc0\xaf\xed\xa0\x80") == "?????");                       // overlong, a surrogate
  CHECK(printable(std::string(10, 'a') + "\xe2\x80\xa6", 11) == "aaaaaaaaaa...");  // never cut inside a character
}

TEST_CASE("every diagnostic path: a hostile name said, warned, recorded arrives without a control byte") {
  TempDir t;
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0);
  {
    Diagnostics d(fds[1]);
    d.say("agent-sandbox: warning: " + kHostile);
    GitFinding f{"/ws/" + kHostile, "embedded_repository", {"core.fsmonitor"}, ""};
    d.say("agent-sandbox: warning: " + finding_warning(f, safe_git_command("/ws", "")));
    d.flush(1000);
  }
  char buf[8192];
  ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  ::close(fds[1]);
  std::string got(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  CHECK(std::count(got.begin(), got.end(), '\n') == 2);  // two lines said, two lines arrive
  std::string without_newlines = got;
  std::erase(without_newlines, '\n');
  CHECK(clean(without_newlines));
  CHECK(got.find("\nagent-sandbox: all checks passed") == std::string::npos);
  GitReport r;
  r.ran = true;
  r.find({"/ws/" + kHostile, "embedded_repository", {kHostile}, kHostile});
  r.remove({"/ws/.git/logs/" + kHostile, "symlink"});
  r.strip({"/ws/" + kHostile, 04755, 0755});
  r.quarantined.push_back({"/ws/" + kHostile, "/ws/.asbx-quarantine-0/1", "deeper than 128 levels"});
  r.unswept.push_back("/ws/" + kHostile);
  std::string record = git_json(r).dump();
  CHECK(record.find("\\u001b") == std::string::npos);
  CHECK(record.find("\\n") == std::string::npos);
  CHECK(clean(record));
}

TEST_CASE("a directory deeper than the limit is set aside and the walk goes on to everything after it") {
  TempDir t;
  deep(t.dir / "root/objects/zz", 140);
  fs::create_directories(t.dir / "root/refs/heads");
  fs::create_symlink("/etc/hostname", t.dir / "root/refs/heads/main");
  int root = open_dir(t.dir / "root");
  std::vector<std::string> visited, aside;
  WalkEvents ev{[&](const WalkEntry& e) {
                  visited.push_back(e.path);
                  return S_ISDIR(e.st.st_mode);
                },
                [&](const WalkEntry& e, const std::string& why) { aside.push_back(e.path + " " + why); }};
  WalkOutcome out = walk_tree(root, "R", WalkLimits{}, ev);
  ::close(root);
  CHECK(out.unfinished.empty());
  REQUIRE(aside.size() == 1);
  CHECK(aside[0].find(" deeper than 128 levels") != std::string::npos);
  CHECK(std::count(visited.begin(), visited.end(), "R/refs/heads/main") == 1);  // after the deep one or before: seen
}

TEST_CASE("the sweep quarantines what a limit keeps out; past the entry budget no directory is entered") {
  TempDir t;
  fs::create_directories(t.dir / "git/logs/refs/heads");
  deep(t.dir / "git/logs/refs/heads/x", 6);
  for (int i = 0; i < 5; ++i) fs::create_directories(t.dir / ("git/logs/d" + std::to_string(i)));
  fs::create_symlink("/etc/hostname", t.dir / "git/logs/refs/heads/main");
  int logs = open_dir(t.dir / "git/logs"), git = open_dir(t.dir / "git");
  GitReport r;
  Quarantine q(git, (t.dir / "git").string());
  WalkLimits limits;
  limits.max_depth = 4;
  limits.max_entries = 6;
  sweep_git_dir(logs, "L", limits, q, r);
  ::close(logs);
  CHECK(r.unswept.empty());
  CHECK(!fs::is_symlink(t.dir / "git/logs/refs/heads/main"));  // removed, or its directory set aside
  CHECK(!r.quarantined.empty());
  for (const auto& x : r.quarantined) {
    CHECK(fs::exists(x.to));
    CHECK(!fs::exists(t.dir / ("git/logs/" + x.path.substr(2))));
    CHECK(x.to.find("/.asbx-quarantine-") != std::string::npos);
  }
  struct stat st{};
  REQUIRE(::stat(fs::path(r.quarantined[0].to).parent_path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(st.st_uid == ::geteuid());
  ::close(git);
}

TEST_CASE("what cannot be set aside is unswept: no quarantine directory to be had") {
  TempDir t;
  deep(t.dir / "ws", 10);
  int ws = open_dir(t.dir / "ws");
  GitReport r;
  Quarantine q(-1, "");
  WalkLimits limits;
  limits.max_depth = 3;
  WalkEvents ev{[](const WalkEntry& e) { return S_ISDIR(e.st.st_mode); },
                [&](const WalkEntry& e, const std::string& why) { q.take(e, why, r); }};
  walk_tree(ws, "W", limits, ev);
  ::close(ws);
  REQUIRE(r.unswept.size() == 1);
  CHECK(r.unswept[0] == "W/a/a/a (deeper than 3 levels): not swept and not set aside: there is no directory to set it aside in");
}

TEST_CASE("the seat's [git_sweep] may lower the sweep's limits, never raise them") {
  UserFacts u;
  u.uid = 0;
  u.home = "/root";
  SeatConfig c = parse_seat_config("[git_sweep]\nmax_depth = 20\nmax_entries = 100\ntime = \"2s\"\n", "seat.toml", u);
  CHECK(c.git_sweep == GitSweepLimits{20, 100, 2000});
  CHECK_THROWS_WITH(parse_seat_config("[git_sweep]\nmax_depth = 129\n", "seat.toml", u),
                    doctest::Contains("'max_depth' must be between 1 and 128"));
  CHECK_THROWS_WITH(parse_seat_config("[git_sweep]\ntime = \"2m\"\n", "seat.toml", u),
                    doctest::Contains("'time' must be between 1 and 60000"));
}

TEST_CASE("the workspace's FIFOs, sockets and devices are removed on record; its symlinks stay") {
  TempDir t;
  fs::create_directories(t.dir / "ws/u");
  REQUIRE(::mkfifo((t.dir / "ws/.gitignore").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((t.dir / "ws/u/.mailmap").c_str(), 0600) == 0);
  fs::create_symlink("a.txt", t.dir / "ws/link");
  int ws = open_dir(t.dir / "ws");
  GitPlan git;
  git.shape = "none";
  git.workspace.path = (t.dir / "ws").string();
  GitReport r;
  Quarantine q(ws, git.workspace.path);
  scan_workspace(ws, git, "/workspace", WalkLimits{}, q, r);
  ::close(ws);
  std::sort(r.removed.begin(), r.removed.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  CHECK(r.removed == std::vector<GitRemoval>{{git.workspace.path + "/.gitignore", "fifo"}, {git.workspace.path + "/u/.mailmap", "fifo"}});
  CHECK(!fs::exists(fs::symlink_status(t.dir / "ws/.gitignore")));
  CHECK(fs::is_symlink(t.dir / "ws/link"));
  CHECK(r.unswept.empty());
}

TEST_CASE("an index whose entry path git refuses is removed from the gitdir on record; a sound one stays") {
  auto index = [](const std::string& path) {
    std::string e(24, '\0');
    e += std::string("\0\0\x81\xa4", 4) + std::string(12, '\0') + std::string(20, '\x11');
    e += static_cast<char>(0);
    e += static_cast<char>(path.size());
    e += path;
    do e += '\0';
    while (e.size() % 8);
    return std::string("DIRC\0\0\0\x02\0\0\0\x01", 12) + e + std::string(20, '\x22');
  };
  TempDir t;
  fs::create_directories(t.dir / "gd");
  int gd = open_dir(t.dir / "gd");
  GitReport r;
  std::ofstream(t.dir / "gd/index") << index("a.txt");
  drop_bad_index(gd, "G", 20, r);
  CHECK(r.removed.empty());
  CHECK(fs::exists(t.dir / "gd/index"));
  std::ofstream(t.dir / "gd/index", std::ios::trunc) << index("../../tmp/root-secret");
  drop_bad_index(gd, "G", 20, r);
  CHECK(r.removed == std::vector<GitRemoval>{{"G/index", "index"}});
  CHECK(!fs::exists(t.dir / "gd/index"));
  drop_bad_index(gd, "G", 20, r);  // none there: nothing to say
  CHECK(r.removed.size() == 1);
  ::close(gd);
}
