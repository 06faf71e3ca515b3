#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "base/error.h"
#include "mounts/git.h"
#include "mounts/workspace.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {
using asbx::test::TempDir;

std::string rejection(const std::string& path, const std::string& root) {
  try {
    plan_workspace(path, root);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::workspace_rejected);
    return e.what();
  }
  return "accepted";
}

std::string git_rejection(const std::string& ws, const std::vector<std::string>& roots, const std::string& mirror = "") {
  try {
    plan_git_mounts(ws, mirror, roots);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::git_unmountable);
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("workspace escape corpus") {
  TempDir t;
  std::string r = t.s("ws");
  fs::create_directories(t.dir / "ws/one/inner");
  fs::create_directories(t.dir / "out");
  t.write("ws/file", "x");
  fs::create_symlink("/", t.dir / "ws/to-root");
  fs::create_symlink(t.dir / "ws/one", t.dir / "ws/parent-link");
  fs::create_symlink(t.dir / "ws/one", t.dir / "ws/to-one");
  const std::string canon = "symlinks and '..' are refused";
  CHECK(rejection(r + "/to-root", r) == "workspace '" + r + "/to-root' is not canonical (it resolves to '/'): " + canon);
  CHECK(rejection(r + "/parent-link/inner", r) ==
        "workspace '" + r + "/parent-link/inner' is not canonical (it resolves to '" + r + "/one/inner'): " + canon);
  CHECK(rejection(r + "/one/../one", r) ==
        "workspace '" + r + "/one/../one' is not canonical (it resolves to '" + r + "/one'): " + canon);
  CHECK(rejection(t.s("out"), r) == "workspace '" + t.s("out") + "' resolves to '" + t.s("out") +
                                        "', outside the permitted root '" + r + "'");
  CHECK(rejection(r, r) == "workspace '" + r + "' resolves to '" + r + "', outside the permitted root '" + r + "'");
  CHECK(rejection(r + "/to-one", r) == "workspace '" + r + "/to-one' is not canonical (it resolves to '" + r +
                                           "/one'): " + canon);
  CHECK(rejection(r + "/nope", r) == "workspace '" + r + "/nope' does not resolve: No such file or directory");
  CHECK(rejection(r + "/file", r) == "workspace '" + r + "/file' is not a directory");
  CHECK(rejection("one", r) == "workspace 'one' must be an absolute path");
  CHECK(rejection(r + "/one/inner", r) ==
        "workspace '" + r + "/one/inner' is nested below '" + r + "/one': a workspace must be a direct child of the "
        "permitted root '" + r + "' (one inside another would show one session's files to another)");
  WorkspaceMount ok = plan_workspace(r + "/one/", r);
  CHECK(ok.container_path == "/sandbox/workspaces/one");
  Mount expected{"bind", r + "/one", "/sandbox/workspaces/one", {"rbind", "rw"}};
  struct stat st{};
  REQUIRE(::stat((r + "/one").c_str(), &st) == 0);
  expected.source_dev = st.st_dev;  // the identity checked inside the container before start
  expected.source_ino = st.st_ino;
  CHECK(ok.mount == expected);
}

TEST_CASE("gitdir files parse like git reads them") {
  CHECK(parse_gitdir_file("gitdir: /a/b/.git/worktrees/x\n") == "/a/b/.git/worktrees/x");
  CHECK(parse_gitdir_file("gitdir:../rel\r\n") == "../rel");
  CHECK(parse_gitdir_file("ref: refs/heads/main\n") == "");
  CHECK(parse_gitdir_file("") == "");
  CHECK(join_git_path("/g/wt", "../..") == "/g/wt/../..");
  CHECK(join_git_path("/g/wt", "/abs") == "/abs");
}

TEST_CASE("a linked worktree mounts the caller's mirror read-only, and only what a commit writes read-write") {
  TempDir t;
  fs::create_directories(t.dir / "ws/wt");
  std::string common = t.s("common/repo/.git"), gitdir = common + "/worktrees/wt", ws = t.s("ws/wt");
  for (const char* d : {"objects/info", "refs/heads", "logs", "hooks", "worktrees/wt"})
    fs::create_directories(fs::path(common) / d);
  t.write("ws/wt/.git", "gitdir: " + gitdir + "\n");
  t.write("common/repo/.git/worktrees/wt/commondir", "../..\n");
  t.write("common/repo/.git/worktrees/wt/gitdir", ws + "/.git\n");
  t.write("common/repo/.git/config", "[core]\n\tbare = false\n");
  auto mounts = plan_git_mounts(ws, common, {t.s("common")});
  REQUIRE(mounts.size() > 1);
  CHECK(mounts[0].type == "tmpfs");  // the mirror's root, at its own path
  CHECK(mounts[0].destination == common);
  std::vector<std::pair<std::string, std::string>> got;
  for (std::size_t i = 1; i < mounts.size(); ++i) {
    const Mount& m = mounts[i];
    CHECK(m.source == (m.source == ws + "/.git" ? ws + "/.git" : m.destination));
    CHECK(m.source_ino != 0);  // every bind is verified inside the container before start
    got.emplace_back(m.source, m.options[1]);
  }
  CHECK(got == std::vector<std::pair<std::string, std::string>>{
                   {common + "/config", "ro"}, {common + "/hooks", "ro"}, {common + "/worktrees", "ro"},
                   {common + "/objects", "rw"}, {common + "/refs", "rw"}, {common + "/logs", "rw"},
                   {common + "/objects/info", "ro"}, {gitdir, "rw"}, {gitdir + "/commondir", "ro"},
                   {gitdir + "/gitdir", "ro"}, {ws + "/.git", "ro"}});
  // The link itself, read-only where the agent sees it: neither rewritten nor replaced.
  CHECK(mounts.back().destination == "/sandbox/workspaces/wt/.git");
  fs::create_directories(t.dir / "ws/plain");
  CHECK(plan_git_mounts(t.s("ws/plain"), "", {}).empty());  // no repository: nothing extra
  std::string w = "workspace '" + ws + "': ";
  CHECK(git_rejection(ws, {t.s("common")}) ==
        w + "it is a linked worktree: name its mirror (the common dir) with --git-mirror PATH; the '.git' file is "
            "written by the agent and is not trusted alone");
  CHECK(git_rejection(ws, {t.s("elsewhere")}, common) ==
        w + "--git-mirror '" + common + "' lies outside the permitted git roots (" + t.s("elsewhere") + ")");
  CHECK(git_rejection(t.s("common/repo"), {t.s("common")}, common) ==
        "workspace '" + t.s("common/repo") + "': --git-mirror is named but the workspace has no '.git' file (not a "
                                              "linked worktree)");
  // The agent redirects '.git' to another repository's worktree under the same root.
  fs::create_directories(t.dir / "common/other/.git/worktrees/x");
  t.write("common/other/.git/worktrees/x/commondir", "../..\n");
  t.write("ws/wt/.git", "gitdir: " + t.s("common/other/.git/worktrees/x") + "\n");
  CHECK(git_rejection(ws, {t.s("common")}, common) ==
        w + "'.git' names gitdir '" + t.s("common/other/.git/worktrees/x") + "', which is not a worktree of the mirror '" +
            common + "'");
  // ... or the gitdir's commondir to another repository.
  t.write("ws/wt/.git", "gitdir: ../../common/repo/.git/worktrees/wt\n");
  t.write("common/repo/.git/worktrees/wt/commondir", t.s("common/other/.git") + "\n");
  CHECK(git_rejection(ws, {t.s("common")}, common) ==
        w + "gitdir '" + gitdir + "' has no 'commondir' leading back to the mirror '" + common + "'");
  t.write("common/repo/.git/worktrees/wt/commondir", "../..\n");
  // The worktree entry belongs to another workspace (the link back does not lead here).
  t.write("common/repo/.git/worktrees/wt/gitdir", t.s("ws/other/.git") + "\n");
  CHECK(git_rejection(ws, {t.s("common")}, common) ==
        w + "gitdir '" + gitdir + "' does not point back at '" + ws +
            "/.git' (its 'gitdir' file names another worktree)");
  t.write("common/repo/.git/worktrees/wt/gitdir", ws + "/.git\n");
  t.write("ws/wt/.git", "nonsense\n");
  CHECK(git_rejection(ws, {t.s("common")}, common) == w + "'.git' is a file without a 'gitdir:' line");
  t.write("ws/wt/.git", "gitdir: " + gitdir + "\n");
  CHECK(git_rejection(ws, {t.s("common"), "/"}, "/etc") == w + "--git-mirror '/etc' is a reserved path");
  CHECK(git_rejection(ws, {t.s("ws")}, ws) ==
        w + "--git-mirror '" + ws + "' and the workspace overlap (the agent could write the mirror's config)");
  t.write("common/repo/.git/config", "[extensions]\n\tworktreeConfig = true\n");
  CHECK(git_rejection(ws, {t.s("common")}, common) ==
        w + "the mirror's config enables extensions.worktreeConfig: the worktree's own config would be written by the "
            "agent");
  t.write("common/repo/.git/config", "");
  fs::remove(fs::path(common) / "logs");
  CHECK(git_rejection(ws, {t.s("common")}, common) ==
        w + "'" + common + "/logs' is not a directory (mkdir it: git writes logs there)");
}
