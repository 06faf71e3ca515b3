#include "mounts/git.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "base/error.h"
#include "base/util.h"
#include "gitscan/config.h"
#include "mounts/workspace.h"

namespace asbx {
namespace {

// Paths the container's own layout owns: a git dir may never be bound over them.
const std::vector<std::string> kReserved = {"/proc", "/sys", "/dev", "/etc", "/usr", "/run", "/sandbox",
                                            "/sandbox-secrets", "/sandbox-report"};
// In the worktree's own gitdir: the link back and the link to the mirror.
const std::vector<std::string> kLinkFiles = {"commondir", "gitdir"};

[[noreturn]] void unmountable(const std::string& ws, const std::string& why) { git_unmountable(ws, why); }

std::string trim(std::string s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string roots_text(const std::vector<std::string>& roots) {
  return roots.empty() ? "none configured" : join(roots);
}

bool under_or_at(const std::string& path, const std::string& root) { return path == root || path_is_under(path, root); }

// The named mirror: realpath, a directory, under a permitted root, not reserved, and
// neither inside the workspace nor containing it.
std::string checked_mirror(const std::string& ws, const std::string& mirror, const std::vector<std::string>& roots) {
  std::string real = resolve_path(mirror);
  struct stat st{};
  if (real.empty() || ::stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    unmountable(ws, "--git-mirror '" + mirror + "' does not resolve to a directory");
  bool permitted = false;
  for (const auto& root : roots) {
    std::string r = resolve_path(root);
    permitted = permitted || (!r.empty() && path_is_under(real, r));
  }
  if (!permitted)
    unmountable(ws, "--git-mirror '" + real + "' lies outside the permitted git roots (" + roots_text(roots) + ")");
  for (const auto& reserved : kReserved)
    if (under_or_at(real, reserved)) unmountable(ws, "--git-mirror '" + real + "' is a reserved path");
  if (under_or_at(real, ws) || path_is_under(ws, real))
    unmountable(ws, "--git-mirror '" + real + "' and the workspace overlap (the agent could write the mirror's config)");
  return real;
}

Mount bind(const std::string& ws, const std::string& path, bool rw, bool dir) {
  return git_bind(ws, path, path, rw, dir, dir ? "mkdir it in the mirror" : "repair the worktree with git worktree repair");
}

// The first line of a link file in the gitdir, resolved against `base`.
std::string resolved_link(const std::string& gitdir, const std::string& file, const std::string& base) {
  std::string value = trim(first_line(gitdir + "/" + file));
  return value.empty() ? "" : resolve_path(join_git_path(base, value));
}

// extensions.worktreeConfig makes git obey <gitdir>/config.worktree, which the agent writes.
bool enables_worktree_config(const std::string& mirror) {
  std::ifstream in(mirror + "/config");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text.find("worktreeconfig") != std::string::npos;
}

}  // namespace

std::string parse_gitdir_file(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.rfind("gitdir:", 0) != 0) return "";
  return trim(line.substr(7));
}

std::string join_git_path(const std::string& base, const std::string& value) {
  return !value.empty() && value[0] == '/' ? value : base + "/" + value;
}

namespace {

GitMounts plan_linked_worktree(const WorkspaceMount& w, const std::string& mirror_arg,
                               const std::vector<std::string>& git_roots) {
  const std::string& ws = w.host_path;
  std::string dotgit = ws + "/.git";
  struct stat st{};
  if (::lstat(dotgit.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
    unmountable(ws, "--git-mirror is named but the workspace has no '.git' file (not a linked worktree)");
  if (!S_ISREG(st.st_mode)) unmountable(ws, "'.git' is neither a directory nor a gitdir file");
  if (mirror_arg.empty())
    unmountable(ws, "it is a linked worktree: name its mirror (the common dir) with --git-mirror PATH; "
                    "the '.git' file is written by the agent and is not trusted alone");
  std::string mirror = checked_mirror(ws, mirror_arg, git_roots);
  std::string gitdir_value = parse_gitdir_file(first_line(dotgit) + "\n");
  if (gitdir_value.empty()) unmountable(ws, "'.git' is a file without a 'gitdir:' line");
  std::string gitdir = resolve_path(join_git_path(ws, gitdir_value));
  std::string name = gitdir.substr(gitdir.rfind('/') + 1);
  if (gitdir != mirror + "/worktrees/" + name || !is_plain_name(name, 255))
    unmountable(ws, "'.git' names gitdir '" + gitdir_value + "', which is not a worktree of the mirror '" + mirror + "'");
  if (resolved_link(gitdir, "commondir", gitdir) != mirror)
    unmountable(ws, "gitdir '" + gitdir + "' has no 'commondir' leading back to the mirror '" + mirror + "'");
  if (resolved_link(gitdir, "gitdir", gitdir) != dotgit)
    unmountable(ws, "gitdir '" + gitdir + "' does not point back at '" + dotgit + "' (its 'gitdir' file names another worktree)");
  if (enables_worktree_config(mirror))
    unmountable(ws, "the mirror's config enables extensions.worktreeConfig: the worktree's own config would be "
                    "written by the agent");
  GitMounts out;
  plan_tmpfs_root(ws, mirror, mirror, true, out);  // the mirror's root: a tmpfs at its own path
  out.mounts.push_back(bind(ws, gitdir, true, true));
  GitPlan& g = out.git;
  g.gitdir = pinned(out.mounts.back());
  for (const auto& file : kLinkFiles) out.mounts.push_back(bind(ws, gitdir + "/" + file, false, false));
  // The link itself: read-only, so it can be neither rewritten nor replaced (a mount point).
  out.mounts.push_back(git_bind(ws, dotgit, w.container_path + "/.git", false, false,
                                "repair the worktree with git worktree repair"));
  g.shape = "linked_worktree";
  g.mirror = mirror;
  g.writable.push_back(g.gitdir);
  return out;
}

}  // namespace

[[noreturn]] void git_unmountable(const std::string& ws, const std::string& why) {
  throw Error(ErrorKind::git_unmountable, "workspace '" + ws + "': " + why);
}

Mount git_bind(const std::string& ws, const std::string& source, const std::string& destination, bool rw, bool dir,
               const std::string& remedy) {
  struct stat st{};
  if (::lstat(source.c_str(), &st) != 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
    git_unmountable(ws, "'" + source + "' is not a " + (dir ? "directory" : "regular file") + " (" + remedy + ")");
  Mount m{"bind", source, destination, {"rbind", rw ? "rw" : "ro"}};
  m.source_dev = st.st_dev;
  m.source_ino = st.st_ino;
  return m;
}

PinnedDir pinned(const Mount& m) { return {m.source, m.source_dev, m.source_ino}; }

std::size_t config_hash_len(const std::string& config_path) {
  std::ifstream in(config_path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return object_id_bytes(parse_git_config(text).entries);
}

GitMounts plan_git(const WorkspaceMount& ws, const std::string& mirror, const std::vector<std::string>& git_roots) {
  struct stat st{};
  bool exists = ::lstat((ws.host_path + "/.git").c_str(), &st) == 0;
  GitMounts out;
  if (exists && S_ISDIR(st.st_mode) && mirror.empty()) out = plan_plain_clone(ws);
  else if (exists || !mirror.empty()) out = plan_linked_worktree(ws, mirror, git_roots);
  else out.git.shape = "none";
  out.git.workspace = pinned(ws.mount);
  out.git.container_workspace = ws.container_path;
  return out;
}

std::vector<Mount> plan_git_mounts(const std::string& workspace, const std::string& mirror,
                                   const std::vector<std::string>& git_roots) {
  WorkspaceMount ws;
  ws.host_path = workspace;
  ws.container_path = "/sandbox/workspaces/" + workspace.substr(workspace.rfind('/') + 1);
  ws.mount = Mount{"bind", workspace, ws.container_path, {"rbind", "rw"}};
  return plan_git(ws, mirror, git_roots).mounts;
}

std::vector<std::string> member_git_roots(const std::vector<std::string>& git_roots, const std::vector<std::string>& taken) {
  std::vector<std::string> real, out;
  for (const auto& root : git_roots) {
    // A root made after the fill is still held: a member made before it must fit sessions after it.
    std::string r = resolve_path(root);
    if (r.empty() && !root.empty() && root[0] == '/') r = std::filesystem::path(root).lexically_normal().string();
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    bool reserved = r.empty() || r == "/";
    for (const auto& p : kReserved) reserved = reserved || under_or_at(r, p) || path_is_under(p, r);
    for (const auto& p : taken) reserved = reserved || under_or_at(p, r);
    if (!reserved) real.push_back(r);
  }
  for (const auto& r : real) {
    bool inside = std::any_of(real.begin(), real.end(), [&](const std::string& o) { return path_is_under(r, o); });
    if (!inside && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

}  // namespace asbx
