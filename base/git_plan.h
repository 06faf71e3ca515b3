// The git part of a plan as values: which shape the workspace's repository has, what the
// launcher copies into the tmpfs gitdir and back, and which host directories the agent can
// write (swept after it ends). mounts/git.h decides it; launcher/gitguard/ carries it out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace asbx {

// A host directory as it was validated (resolved path, device, inode): the launcher pins it by
// fd before anything exists and refuses the session if it is another one by then.
struct PinnedDir {
  std::string path;
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const PinnedDir&) const = default;
};

// The files that live in the tmpfs gitdir root (a linked worktree's HEAD and index are in its own
// gitdir: only packed-refs there): copied in between init and start,
// read back after the agent ends, validated, and put into the host gitdir (new file + rename).
inline constexpr const char* kGitCopiedFiles[] = {"HEAD", "index", "packed-refs"};
// The most the launcher copies of each (the index of ~500 000 paths); a larger one is refused up front.
inline constexpr std::int64_t kGitCopyMaxBytes = 64LL << 20;

// The sweep after the agent (launcher/gitguard/walk.h): how deep, how many entries per walk, how
// long before directories are set aside rather than entered (twice as long: the hard stop).
// The seat's [git_sweep] table may lower them (plan/config.cc).
struct GitSweepLimits {
  int max_depth = 128;
  std::int64_t max_entries = 2'000'000;
  std::int64_t ms = 60'000;
  bool operator==(const GitSweepLimits&) const = default;
};

struct GitPlan {
  std::string shape;              // "none" (no repository), "plain" (a .git dir), "linked_worktree"
  PinnedDir workspace;            // the workspace (walked: setuid/setgid, nested repositories)
  std::string container_workspace;  // where it is inside (/sandbox/workspaces/<name>)
  PinnedDir gitdir;               // plain: <ws>/.git; linked: <mirror>/worktrees/<name>
  PinnedDir common;               // plain: the gitdir again; linked: the mirror (its root is the tmpfs)
  std::string mirror;             // linked: the common dir as named (--git-mirror, resolved)
  std::string tmpfs;              // the tmpfs inside at the common dir's root (a plain clone's .git, the mirror)
  std::vector<std::string> copyable;  // what may come back from it: all of kGitCopiedFiles (plain), packed-refs (linked)
  std::vector<std::string> copied;    // which of those the host has, copied in before start
  std::vector<PinnedDir> writable;  // objects/ refs/ logs/ (+ the linked gitdir): swept after
  std::size_t hash_len = 20;      // bytes of an object id: 20 (sha1) or 32 (sha256)
  GitSweepLimits sweep;
  // The seat's git roots where a warm member holds a mount point (mounts/git.h member_git_roots):
  // its mirror mounts are made there at claim (launcher/pool/warm_tree.h).
  std::vector<std::string> member_roots;
  bool operator==(const GitPlan&) const = default;
};

}  // namespace asbx
