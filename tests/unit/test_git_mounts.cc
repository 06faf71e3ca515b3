// mounts/git_plain.cc: a plain clone's gitdir root becomes a tmpfs; what git obeys is bound
// read-only into it, what a commit writes read-write; what cannot be planned is refused up front.
// And the record's `git` object and the warnings (base/git_report.cc, gitscan/advice.cc).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "base/error.h"
#include "gitscan/advice.h"
#include "mounts/git.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;
using asbx::test::TempDir;

namespace {

// A clone as `git clone` leaves it: HEAD, config, index, packed-refs, hooks/, info/, objects/info, refs, logs.
void clone_at(const TempDir& t, const std::string& rel) {
  for (const char* d : {"hooks", "info", "objects/info", "refs/heads", "logs", "branches"})
    fs::create_directories(t.dir / rel / ".git" / d);
  t.write(rel + "/.git/HEAD", "ref: refs/heads/main\n");
  t.write(rel + "/.git/config", "[core]\n\tbare = false\n");
  t.write(rel + "/.git/index", "DIRC");
  t.write(rel + "/.git/packed-refs", "");
}

std::string refusal(const std::string& ws) {
  try {
    plan_git_mounts(ws, "", {});
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::git_unmountable);
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("a plain clone: a tmpfs gitdir, what git obeys read-only, what a commit writes read-write") {
  TempDir t;
  clone_at(t, "ws/repo");
  std::string ws = t.s("ws/repo"), in = "/sandbox/workspaces/repo/.git";
  WorkspaceMount w{ws, "/sandbox/workspaces/repo", Mount{"bind", ws, "/sandbox/workspaces/repo", {"rbind", "rw"}}};
  GitMounts g = plan_git(w, "", {});
  std::vector<std::tuple<std::string, std::string, std::string>> got;
  for (const auto& m : g.mounts) got.emplace_back(m.type, m.source, m.destination + " " + m.options[m.type == "tmpfs" ? 0 : 1]);
  CHECK(got == std::vector<std::tuple<std::string, std::string, std::string>>{
                   {"tmpfs", "tmpfs", in + " rw"},
                   {"bind", ws + "/.git/config", in + "/config ro"},
                   {"bind", ws + "/.git/hooks", in + "/hooks ro"},
                   {"bind", ws + "/.git/info", in + "/info ro"},
                   {"bind", ws + "/.git/branches", in + "/branches ro"},
                   {"bind", ws + "/.git/objects", in + "/objects rw"},
                   {"bind", ws + "/.git/refs", in + "/refs rw"},
                   {"bind", ws + "/.git/logs", in + "/logs rw"},
                   {"bind", ws + "/.git/objects/info", in + "/objects/info ro"}});
  CHECK(g.mounts[0].options == std::vector<std::string>{"rw", "size=256m", "nosuid", "nodev", "noexec", "mode=0755", "U", "notmpcopyup"});
  CHECK(g.git.shape == "plain");
  CHECK(g.git.tmpfs == in);
  CHECK(g.git.copied == std::vector<std::string>{"HEAD", "index", "packed-refs"});
  CHECK(g.git.gitdir.path == ws + "/.git");
  CHECK(g.git.gitdir.ino != 0);
  CHECK(g.git.writable.size() == 3);
  CHECK(g.git.writable[1].path == ws + "/.git/refs");
  CHECK(g.git.hash_len == 20);
}

TEST_CASE("a plain clone git could not use, or one the launcher cannot copy, is refused up front") {
  TempDir t;
  clone_at(t, "ws/r");
  std::string ws = t.s("ws/r"), w = "workspace '" + ws + "': ";
  fs::remove(t.dir / "ws/r/.git/HEAD");
  CHECK(refusal(ws) == w + "'" + ws + "/.git' has no HEAD file: it is not a repository git can use");
  t.write("ws/r/.git/HEAD", "ref: refs/heads/main\n");
  t.write("ws/r/.git/commondir", "../../elsewhere\n");
  CHECK(refusal(ws) == w + "'" + ws + "/.git/commondir' exists: this '.git' directory is another repository's worktree "
                           "gitdir (its config and objects live elsewhere); give that worktree and its --git-mirror");
  fs::remove(t.dir / "ws/r/.git/commondir");
  fs::remove_all(t.dir / "ws/r/.git/hooks");
  fs::create_symlink(t.s("ws/elsewhere"), t.dir / "ws/r/.git/hooks");
  CHECK(refusal(ws) == w + "'" + ws + "/.git/hooks' is not a directory (git obeys it; replace the link with the directory "
                           "it names)");
  fs::remove(t.dir / "ws/r/.git/hooks");
  fs::remove_all(t.dir / "ws/r/.git/logs");
  CHECK(refusal(ws) == w + "'" + ws + "/.git/logs' is not a directory (mkdir it: git writes logs there)");
  fs::create_directories(t.dir / "ws/r/.git/logs");
  ::truncate(t.s("ws/r/.git/index").c_str(), (64LL << 20) + 1);
  CHECK(refusal(ws) == w + "'" + ws + "/.git/index' is 67108865 bytes, more than the 64m the launcher copies into the "
                           "session's gitdir");
  ::truncate(t.s("ws/r/.git/index").c_str(), 4);
  fs::remove(t.dir / "ws/r/.git/packed-refs");
  fs::create_directory(t.dir / "ws/r/.git/packed-refs");
  CHECK(refusal(ws) == w + "'" + ws + "/.git/packed-refs' is not a regular file (the launcher copies it into the session "
                           "and back)");
}

TEST_CASE("the record's git object and the warning for each finding") {
  GitReport r;
  CHECK(git_json(r).is_null());  // never started
  r.ran = true;
  r.shape = "plain";
  r.find({"/ws/a/sub", "embedded_repository", {"core.fsmonitor"}, ""});
  r.remove({"/ws/a/.git/logs/HEAD", "symlink"});
  r.strip({"/ws/a/x", 04755, 0755});
  r.copied_back = {"HEAD", "index"};
  auto j = git_json(r);
  CHECK(j["findings"][0]["keys"] == nlohmann::json({"core.fsmonitor"}));
  CHECK(j["removed"][0]["kind"] == "symlink");
  CHECK(j["setid_stripped"][0]["mode"] == "4755");
  CHECK(j["setid_stripped"][0]["now"] == "0755");
  CHECK(j["scan"]["complete"] == true);
  std::string safe = safe_git_command("/ws/a", "");
  CHECK(safe == "agent-sandbox git --workspace '/ws/a'");
  CHECK(finding_warning(r.findings[0], safe) ==
        "git: '/ws/a/sub' is a repository the agent made inside the workspace (its config sets core.fsmonitor): a plain "
        "git in the workspace enters it and obeys its config; run git there only as 'agent-sandbox git --workspace "
        "'/ws/a' -- …', or remove '/ws/a/sub/.git' after reading it");
  for (int i = 0; i < 300; ++i) r.remove({"/x", "fifo"});
  CHECK(r.removed.size() == kMaxNamedGitEntries);
  CHECK(r.unnamed == 101);
}
