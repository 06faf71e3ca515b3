#include "launcher/gitguard/safe_git.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"
#include "gitscan/config.h"
#include "gitscan/index.h"
#include "gitscan/safe_git.h"
#include "launcher/lifecycle/local.h"
#include "mounts/git.h"
#include "preflight/spawn.h"

extern char** environ;

namespace asbx {
namespace {

constexpr std::int64_t kMaxConfigBytes = 1 << 20;
constexpr int kMaxIncludeDepth = 10;  // git's own limit
constexpr std::int64_t kMaxIndexBytes = 64LL << 20;
constexpr int kMaxNestingDepth = 4;       // repositories inside repositories inside ...
constexpr std::size_t kMaxNestedRepositories = 256;

// A config file git would read: a regular file, opened without blocking (a FIFO named by an
// include the agent wrote must not hang us); missing → nullopt, as git skips it.
std::optional<std::string> read_config_file_bounded(const std::string& path, std::int64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  std::string data;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= max_bytes) {
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && static_cast<std::int64_t>(data.size()) <= max_bytes;)
      data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return data;
}

std::optional<std::string> read_config_file(const std::string& path) { return read_config_file_bounded(path, kMaxConfigBytes); }

std::string dir_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The file and, depth first, every file its include.path / includeIf.*.path name, whatever the
// condition (a superset of what git reads: a driver named anywhere there is neutralized).
void read_config_tree(const std::string& path, int depth, std::vector<GitConfigEntry>& out) {
  if (depth > kMaxIncludeDepth) return;
  auto text = read_config_file(path);
  if (!text) return;
  GitConfigParse parsed = parse_git_config(*text);
  out.insert(out.end(), parsed.entries.begin(), parsed.entries.end());
  const char* home = std::getenv("HOME");
  for (const auto& inc : include_paths(parsed.entries)) {
    std::string p = inc;
    if (p.rfind("~/", 0) == 0 && home) p = std::string(home) + p.substr(1);
    else if (!p.empty() && p[0] != '/') p = dir_of(path) + "/" + p;
    if (!p.empty()) read_config_tree(p, depth + 1, out);
  }
}

// The gitdir a gitlink's checkout at `dir` uses: `dir/.git` itself, or where its `gitdir:` file
// sends git; "" when there is none.
std::string nested_gitdir(const std::string& dir) {
  struct stat st{};
  std::string dotgit = dir + "/.git";
  if (::lstat(dotgit.c_str(), &st) != 0) return "";
  if (S_ISDIR(st.st_mode)) return dotgit;
  auto text = read_config_file(dotgit);
  std::string value = text ? parse_gitdir_file(*text) : "";
  return value.empty() ? "" : join_git_path(dir, value);
}

// git enters the checkout of every gitlink it checks (`git add` runs `git status` there, whatever
// diff.ignoreSubmodules says), and that child git reads the nested repository's own config: its
// drivers are neutralized too (the overrides travel in the environment the child inherits).
void read_nested_configs(const std::string& work_tree, const std::string& gitdir, std::size_t hash_len, int depth,
                         std::size_t& seen, std::vector<GitConfigEntry>& out) {
  if (depth > kMaxNestingDepth) return;
  auto index = read_config_file_bounded(gitdir + "/index", kMaxIndexBytes);
  if (!index) return;
  for (const auto& link : parse_git_index(*index, hash_len).gitlinks) {
    if (++seen > kMaxNestedRepositories) return;
    std::string dir = work_tree + "/" + link, nested = nested_gitdir(dir);
    if (nested.empty()) continue;
    read_config_tree(nested + "/config", 0, out);
    read_nested_configs(dir, nested, hash_len, depth + 1, seen, out);
  }
}

void apply_env(const SafeGitRun& run) {
  for (const auto& [name, value] : run.env) {
    int rc = value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
    if (rc != 0) throw Error(ErrorKind::internal, "cannot set " + name + " for git: " + std::strerror(errno));
  }
}

int run(const std::string& ws_arg, const std::string& mirror, const std::vector<std::string>& args) {
  if (args.empty())
    throw Error(ErrorKind::usage, "git: give git's arguments after '--', e.g. agent-sandbox git --workspace WS -- status");
  SeatConfig seat = current_seat_config();
  WorkspaceMount ws = plan_workspace(ws_arg, seat.workspace_root);
  GitMounts g = plan_git(ws, mirror, seat.git_roots);
  if (g.git.shape == "none")
    throw Error(ErrorKind::git_unmountable, "workspace '" + ws.host_path + "': it holds no repository (no '.git')");
  std::vector<GitConfigEntry> config;
  read_config_tree(g.git.common.path + "/config", 0, config);
  read_config_tree(g.git.gitdir.path + "/config.worktree", 0, config);  // read by git when enabled
  std::size_t nested = 0;
  read_nested_configs(ws.host_path, g.git.gitdir.path, g.git.hash_len, 1, nested, config);
  std::string common = g.git.shape == "linked_worktree" ? g.git.common.path : "";
  SafeGitRun r = safe_git_run(kHostGit, ws.host_path, g.git.gitdir.path, common, config, environ_map(environ), args);
  if (::access(kHostGit, X_OK) != 0)
    throw Error(ErrorKind::host_git_unavailable, std::string("git: ") + kHostGit + " cannot be run: " + std::strerror(errno));
  if (::chdir(ws.host_path.c_str()) != 0)
    throw Error(ErrorKind::workspace_rejected, "workspace '" + ws.host_path + "' cannot be entered: " + std::strerror(errno));
  apply_env(r);
  exec_host_git(r.argv);
  throw Error(ErrorKind::host_git_unavailable, std::string("git: ") + kHostGit + " could not be run: " + std::strerror(errno));
}

}  // namespace

int safe_git_main(const std::string& program, const std::string& workspace, const std::string& mirror,
                  const std::vector<std::string>& args) {
  try {
    return run(workspace, mirror, args);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), printable(e.what()).c_str());
    return e.exit_code();
  }
}

}  // namespace asbx
