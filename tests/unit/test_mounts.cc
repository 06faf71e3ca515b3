#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "launcher/error.h"
#include "mounts/git.h"
#include "mounts/workspace.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path dir;
  TempDir() {
    char tmpl[] = "/tmp/asbx-unit-mounts-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(dir); }
  std::string s(const std::string& rel = "") const { return rel.empty() ? dir.string() : (dir / rel).string(); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
};

std::string rejection(const std::string& path, const std::string& root) {
  try {
    plan_workspace(path, root);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::workspace_rejected);
    return e.what();
  }
  return "accepted";
}

std::string git_rejection(const std::string& ws, const std::vector<std::string>& roots) {
  try {
    plan_git_mounts(ws, roots);
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

TEST_CASE("a linked worktree mounts its common dir and gitdir at the same paths") {
  TempDir t;
  fs::create_directories(t.dir / "ws/wt");
  fs::create_directories(t.dir / "common/repo/.git/worktrees/wt");
  std::string common = t.s("common/repo/.git");
  t.write("ws/wt/.git", "gitdir: " + common + "/worktrees/wt\n");
  t.write("common/repo/.git/worktrees/wt/commondir", "../..\n");
  auto mounts = plan_git_mounts(t.s("ws/wt"), {t.s("common")});
  CHECK(mounts == std::vector<Mount>{{"bind", common, common, {"rbind", "rw"}},
                                     {"bind", common + "/worktrees/wt", common + "/worktrees/wt", {"rbind", "rw"}}});
  CHECK(plan_git_mounts(t.s("common/repo"), {}).empty());  // a plain repository: nothing extra
  CHECK(git_rejection(t.s("ws/wt"), {t.s("elsewhere")}) ==
        "workspace '" + t.s("ws/wt") + "': gitdir '" + common + "/worktrees/wt' lies outside the permitted git roots (" +
            t.s("elsewhere") + ")");
  t.write("common/repo/.git/worktrees/wt/commondir", "");
  CHECK(git_rejection(t.s("ws/wt"), {t.s("common")}) ==
        "workspace '" + t.s("ws/wt") + "': gitdir '" + common + "/worktrees/wt' has no 'commondir' file");
  t.write("ws/wt/.git", "nonsense\n");
  CHECK(git_rejection(t.s("ws/wt"), {t.s("common")}) ==
        "workspace '" + t.s("ws/wt") + "': '.git' is a file without a 'gitdir:' line");
  t.write("ws/wt/.git", "gitdir: ../../common/repo/.git/worktrees/wt\n");
  t.write("common/repo/.git/worktrees/wt/commondir", "/etc\n");
  CHECK(git_rejection(t.s("ws/wt"), {t.s("common"), "/"}) ==
        "workspace '" + t.s("ws/wt") + "': commondir '/etc' is a reserved path");
}
