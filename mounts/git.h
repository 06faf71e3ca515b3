// What git executes or obeys must not be writable from inside, for every workspace shape the
// launcher accepts (docs/MOUNTS.md has the table):
//
// A plain clone (`<ws>/.git` a directory): a tmpfs at `.git` inside, the host's config, hooks/,
// info/, ... bound read-only into it, objects/ refs/ logs/ bound read-write (objects/info
// read-only again); HEAD, index and packed-refs are copied in by the launcher and back after
// the agent ends, validated (mounts/git_root.cc, launcher/gitguard/). Nothing else the agent
// writes in the gitdir's root reaches the host.
//
// A linked git worktree (a `.git` FILE with `gitdir:`) needs its gitdir and the common dir at
// the SAME absolute paths inside, or git breaks. The agent writes the `.git` file and
// everything in the gitdir, so neither may choose what is mounted: the caller names the common
// dir (`--git-mirror PATH`) and the link is checked both ways:
//   <workspace>/.git  -> gitdir: <mirror>/worktrees/<name>   (resolved; exactly that dir)
//   <gitdir>/commondir -> <mirror>                           (resolved)
//   <gitdir>/gitdir    -> <workspace>/.git                   (resolved)
// The mirror must lie under one of the seat's git roots, outside the workspace (and the
// workspace outside it). The mirror's root is a tmpfs like a plain clone's (its config, hooks,
// HEAD, worktrees/ ... read-only, objects/ refs/ logs/ read-write, packed-refs copied), this
// worktree's gitdir is bound read-write with its link files read-only again, and the `.git` link
// itself is bound read-only (it can be neither rewritten nor replaced).
#pragma once
#include <string>
#include <vector>

#include "base/git_plan.h"
#include "base/plan.h"
#include "mounts/workspace.h"

namespace asbx {

// The path after "gitdir:" on the first line (whitespace trimmed); "" when absent.
std::string parse_gitdir_file(const std::string& text);
// `value` relative to `base` unless absolute (how git reads gitdir and commondir).
std::string join_git_path(const std::string& base, const std::string& value);

struct GitMounts {
  std::vector<Mount> mounts;  // each bind with the device and inode it was checked as
  GitPlan git;
};
// The mounts and the git plan of a workspace: none for no repository (when no mirror is named),
// the tmpfs gitdir for a plain clone, the mirror's binds for a linked worktree.
// Throws Error(git_unmountable) naming the workspace and the reason; nothing is created.
GitMounts plan_git(const WorkspaceMount& ws, const std::string& mirror, const std::vector<std::string>& git_roots);
// The seat's git roots a warm member holds a mount point for (launcher/pool/member.h), each
// resolved (one that does not exist yet as written, normalised); one that is "/", is or holds a
// reserved path or one of TAKEN (where the container mounts of its own: podman refuses a second
// mount at /tmp), or lies inside another kept one, is left out (a mirror under it goes cold).
std::vector<std::string> member_git_roots(const std::vector<std::string>& git_roots, const std::vector<std::string>& taken);
// plan_git(...).mounts for the workspace at `workspace` (mounted at /sandbox/workspaces/<name>).
std::vector<Mount> plan_git_mounts(const std::string& workspace, const std::string& mirror,
                                   const std::vector<std::string>& git_roots);

// Internal to mounts/ (mounts/git_root.cc): a plain clone's plan, and the tmpfs root of a gitdir
// (`host`, seen at `inside`) with its binds, for a plain clone or a linked worktree's common dir.
GitMounts plan_plain_clone(const WorkspaceMount& ws);
void plan_tmpfs_root(const std::string& ws, const std::string& host, const std::string& inside, bool common_dir,
                     GitMounts& out);
[[noreturn]] void git_unmountable(const std::string& ws, const std::string& why);
// A bind of `source` at `destination` with its identity; `dir` says what it must be.
Mount git_bind(const std::string& ws, const std::string& source, const std::string& destination, bool rw, bool dir,
               const std::string& remedy);
PinnedDir pinned(const Mount& m);
// The object id size from a repository's config file (20 unless extensions.objectFormat = sha256).
std::size_t config_hash_len(const std::string& config_path);

}  // namespace asbx
