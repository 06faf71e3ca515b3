// A warm claim's tree under /sandbox/workspaces (launcher/pool/warm_tree.h): the relative path rule,
// and — as root, in a child with a mount namespace of its own — a plain clone's gitdir made beneath
// the ws dir with each mount's flags, a link where a mount goes refused with nothing left mounted,
// a bind whose source went after others were attached, and everything gone after release().
#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include "base/error.h"
#include "launcher/pool/warm_tree.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

struct Dir {
  fs::path dir;
  Dir() {
    char tmpl[] = "/tmp/asbx-unit-tree-XXXXXX";
    dir = fs::canonical(::mkdtemp(tmpl));
  }
  ~Dir() { fs::remove_all(dir); }
};

// A plain clone's tree as a host-namespace seat's plan has it.
LaunchPlan clone_plan(const fs::path& ws) {
  LaunchPlan p;
  p.user = "1000:1000";
  p.git.workspace.path = ws.string();
  p.mounts = {
      {"bind", ws.string(), "/sandbox/workspaces/w", {"rbind", "rw"}, 1, 1},
      {"tmpfs", "tmpfs", "/sandbox/workspaces/w/.git", {"rw", "size=1m", "nosuid", "nodev", "noexec", "mode=0755", "U"}},
      {"bind", (ws / ".git/config").string(), "/sandbox/workspaces/w/.git/config", {"rbind", "ro"}, 1, 1},
      {"bind", (ws / ".git/objects").string(), "/sandbox/workspaces/w/.git/objects", {"rbind", "rw"}, 1, 1},
      {"bind", "/home", "/home", {"rbind", "ro"}},  // not under /sandbox/workspaces: not the tree's
  };
  return p;
}

// Runs F in a child with its own mount namespace (nothing it mounts reaches the test's) and returns
// what F returned: "" or what went wrong.
std::string in_own_mounts(const std::function<std::string()>& f) {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    std::string r = ::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0
                        ? std::string("unshare: ") + std::strerror(errno)
                        : f();
    (void)!::write(out[1], r.data(), r.size());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string r;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) r.append(buf, n);
  ::close(out[0]);
  ::waitpid(pid, nullptr, 0);
  return r;
}

bool mounted_under(const fs::path& dir) {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);)
    if (line.find(" " + dir.string()) != std::string::npos) return true;
  return false;
}

// P's tree mounted beneath DIR/member in a mount namespace of its own: its refusal's message, or
// what went otherwise ("mounted", "another kind", "left behind": a mount or a place stayed).
std::string refused_leaving_nothing(const fs::path& dir, const LaunchPlan& p) {
  return in_own_mounts([&]() -> std::string {
    std::string why;
    try {
      WarmTree tree;
      tree.mount(p, {{"/sandbox/workspaces", (dir / "member").string()}});
      return "mounted";
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::workspace_rejected) return "another kind";
      why = e.what();
    }
    if (mounted_under(dir) || fs::exists(dir / "member/w")) return "left behind";
    return why;
  });
}

}  // namespace

TEST_CASE("warm tree: the path below /sandbox/workspaces, or \"\"") {
  CHECK(warm_tree_path("/sandbox/workspaces/w", "/sandbox/workspaces") == "w");
  CHECK(warm_tree_path("/sandbox/workspaces/w/.git/objects/info", "/sandbox/workspaces") == "w/.git/objects/info");
  CHECK(warm_tree_path("/sandbox/workspaces", "/sandbox/workspaces") == "");
  CHECK(warm_tree_path("/sandbox/workspaces/", "/sandbox/workspaces") == "");
  CHECK(warm_tree_path("/sandbox/workspaces/w/../x", "/sandbox/workspaces") == "");
  CHECK(warm_tree_path("/sandbox/workspaces/w//x", "/sandbox/workspaces") == "");
  CHECK(warm_tree_path("/sandbox/workspacesx/w", "/sandbox/workspaces") == "");
  CHECK(warm_tree_path("/home/w", "/sandbox/workspaces") == "");
  CHECK(warm_tree_path("/srv/git/m/.git/config", "/srv/git") == "m/.git/config");
}

TEST_CASE("warm tree: a plain clone's gitdir beneath the ws dir, each mount with its flags, gone after release") {
  if (::geteuid() != 0) return;  // mounts: root only (CI runs as root)
  Dir d;
  fs::create_directories(d.dir / "ws/.git/objects");
  std::ofstream(d.dir / "ws/.git/config") << "[core]\n";
  fs::create_directories(d.dir / "member");
  std::string r = in_own_mounts([&]() -> std::string {
    std::string top = (d.dir / "member/w").string();
    {
      WarmTree tree;
      tree.mount(clone_plan(d.dir / "ws"), {{"/sandbox/workspaces", (d.dir / "member").string()}});
      struct statfs fs_git{};
      struct stat st{};
      struct statvfs cfg{}, obj{};
      if (::statfs((top + "/.git").c_str(), &fs_git) != 0 || fs_git.f_type != TMPFS_MAGIC) return "no tmpfs at .git";
      if (::stat((top + "/.git").c_str(), &st) != 0 || st.st_uid != 1000 || (st.st_mode & 07777) != 0755)
        return "the gitdir is not 1000's, 0755";
      if (::statvfs((top + "/.git/config").c_str(), &cfg) != 0 || !(cfg.f_flag & ST_RDONLY)) return "config not read-only";
      if (::statvfs((top + "/.git/objects").c_str(), &obj) != 0 || (obj.f_flag & ST_RDONLY)) return "objects read-only";
      if (std::ofstream(top + "/.git/objects/o") << "x"; !fs::exists(d.dir / "ws/.git/objects/o")) return "objects not the host's";
      if (fs::exists(d.dir / "member/home")) return "a mount outside the tree was made";
    }  // the destructor releases
    if (fs::exists(top) || mounted_under(d.dir)) return "left after release";
    return "";
  });
  CHECK(r == "");
}

TEST_CASE("warm tree: a link where a mount goes is refused, nothing is mounted through it, nothing is left") {
  if (::geteuid() != 0) return;
  Dir d;
  fs::create_directories(d.dir / "elsewhere");
  fs::create_directories(d.dir / "ws");
  fs::create_symlink(d.dir / "elsewhere", d.dir / "ws/.git");  // what a hostile tree could hold
  std::ofstream(d.dir / "config") << "[core]\n";
  fs::create_directories(d.dir / "member");
  LaunchPlan p = clone_plan(d.dir / "ws");
  p.mounts.resize(2);  // the workspace, then the tmpfs at its .git
  std::string r = refused_leaving_nothing(d.dir, p);
  CHECK(r == "warm pool: the mount at '/sandbox/workspaces/w/.git': its place 'w/.git': Too many levels of symbolic "
             "links; nothing was started");
}

TEST_CASE("warm tree: a bind whose source went after three mounts were attached detaches them all") {
  if (::geteuid() != 0) return;
  Dir d;
  fs::create_directories(d.dir / "ws/.git");  // its objects dir removed since the plan was made
  std::ofstream(d.dir / "ws/.git/config") << "[core]\n";
  fs::create_directories(d.dir / "member");
  std::string r = refused_leaving_nothing(d.dir, clone_plan(d.dir / "ws"));
  CHECK(r == "warm pool: the mount at '/sandbox/workspaces/w/.git/objects': open_tree: No such file or directory; "
             "nothing was started");
}
