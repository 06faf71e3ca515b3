// A gitdir's root inside a session — a plain clone's `.git`, a linked worktree's mirror — is a
// tmpfs (counted in the container's memory): lock files, FETCH_HEAD, COMMIT_EDITMSG, ORIG_HEAD
// and anything new land there and die with the session. What git obeys is bound read-only into it
// from the host; what a commit writes (objects, refs, reflogs) read-write. The files git rewrites
// there by renaming a lock file over them (a plain clone's HEAD and index, packed-refs) are copied
// in by the launcher before start and back after (launcher/gitguard/), validated; the table is in
// docs/MOUNTS.md.
#include <sys/stat.h>

#include "base/units.h"
#include "mounts/git.h"

namespace asbx {
namespace {

// What git obeys in the gitdir's root: read-only inside, each only if the host has it.
const char* const kObeyedFiles[] = {"config", "config.worktree", "description", "shallow"};
const char* const kObeyedDirs[] = {"hooks", "info", "branches", "remotes", "modules", "worktrees", "rr-cache", "lfs"};
// What a commit, branch, stash, rebase or fetch writes outside the root: read-write, required.
const char* const kWritableDirs[] = {"objects", "refs", "logs"};
// Room for the copied files, their lock files and git's transient ones. notmpcopyup: podman would
// otherwise copy the whole host .git (objects included) into the tmpfs before the binds hide it.
const char* const kTmpfsOptions[] = {"rw", "size=256m", "nosuid", "nodev", "noexec", "mode=0755", "U", "notmpcopyup"};

bool present(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0;
}

// HEAD, index, packed-refs: regular files the launcher can copy whole.
void check_copied(const std::string& ws, const std::string& path, GitPlan& git, const std::string& name) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISREG(st.st_mode))
    git_unmountable(ws, "'" + path + "' is not a regular file (the launcher copies it into the session and back)");
  if (st.st_size > kGitCopyMaxBytes)
    git_unmountable(ws, "'" + path + "' is " + std::to_string(st.st_size) + " bytes, more than the " +
                            format_size(kGitCopyMaxBytes) + " the launcher copies into the session's gitdir");
  git.copied.push_back(name);
}

}  // namespace

void plan_tmpfs_root(const std::string& ws, const std::string& host, const std::string& inside, bool common_dir,
                     GitMounts& out) {
  out.mounts.push_back({"tmpfs", "tmpfs", inside, {std::begin(kTmpfsOptions), std::end(kTmpfsOptions)}});
  std::vector<std::string> files(std::begin(kObeyedFiles), std::end(kObeyedFiles));
  if (common_dir) files.push_back("HEAD");  // the main worktree's: read by git, never written from here
  for (const auto& f : files)
    if (present(host + "/" + f))
      out.mounts.push_back(git_bind(ws, host + "/" + f, inside + "/" + f, false, false,
                                    "git obeys it; replace the link with the file it names"));
  for (const char* d : kObeyedDirs)
    if (present(host + "/" + d))
      out.mounts.push_back(git_bind(ws, host + "/" + d, inside + "/" + d, false, true,
                                    "git obeys it; replace the link with the directory it names"));
  GitPlan& g = out.git;
  for (const char* d : kWritableDirs) {
    out.mounts.push_back(git_bind(ws, host + "/" + d, inside + "/" + d, true, true,
                                  std::string("mkdir it: git writes ") + d + " there"));
    g.writable.push_back(pinned(out.mounts.back()));
  }
  out.mounts.push_back(git_bind(ws, host + "/objects/info", inside + "/objects/info", false, true,
                                "mkdir it: it must exist to be read-only (alternates)"));
  if (common_dir) g.copyable = {"packed-refs"};  // HEAD and index are the worktree's own, in its gitdir
  else g.copyable.assign(std::begin(kGitCopiedFiles), std::end(kGitCopiedFiles));
  for (const auto& f : g.copyable) check_copied(ws, host + "/" + f, g, f);
  struct stat st{};
  ::lstat(host.c_str(), &st);
  g.common = {host, static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
  g.tmpfs = inside;
  g.hash_len = config_hash_len(host + "/config");
}

GitMounts plan_plain_clone(const WorkspaceMount& w) {
  const std::string& ws = w.host_path;
  std::string host = ws + "/.git";
  struct stat st{};
  if (::lstat((host + "/HEAD").c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    git_unmountable(ws, "'" + host + "' has no HEAD file: it is not a repository git can use");
  if (present(host + "/commondir"))
    git_unmountable(ws, "'" + host + "/commondir' exists: this '.git' directory is another repository's worktree "
                        "gitdir (its config and objects live elsewhere); give that worktree and its --git-mirror");
  GitMounts out;
  plan_tmpfs_root(ws, host, w.container_path + "/.git", false, out);
  out.git.shape = "plain";
  out.git.gitdir = out.git.common;
  return out;
}

}  // namespace asbx
