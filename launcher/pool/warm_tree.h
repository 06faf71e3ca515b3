// The session's tree under /sandbox/workspaces, made on the seat beneath a warm member's shared ws
// tmpfs (docs/DECISIONS.md "Issue 37: the warm pool"): every mount of the plan at or under
// /sandbox/workspaces — the workspace, and a plain clone's gitdir (its tmpfs, and what is bound into
// it read-only or read-write) — in the plan's order. Each is made complete while it is detached (its
// flags, its idmap on a range seat, a tmpfs's size, mode and owner), then attached at a place opened
// beneath the ws dir without following a link (made when missing, as runc makes a mount point).
// Propagation puts a copy with the same flags in the member; nothing the member mounts comes back.
// verify_mounts checks every validated bind's inode inside afterwards, as for a cold session.
#pragma once
#include <string>
#include <vector>

#include "base/plan.h"
#include "launcher/pool/member.h"

namespace asbx {

// DESTINATION below ROOT as a relative path ("NAME", "NAME/.git/config" below /sandbox/workspaces);
// "" when it is not there or has an empty, "." or ".." component.
std::string warm_tree_path(const std::string& destination, const std::string& root);

class WarmTree {
 public:
  WarmTree() = default;
  WarmTree(const WarmTree&) = delete;
  WarmTree& operator=(const WarmTree&) = delete;
  ~WarmTree() { release(); }
  // Throws Error(workspace_rejected) naming the mount and the step that failed; what was attached
  // before it is detached again. Error(internal) for a workspace bind outside /sandbox/workspaces.
  void mount(const LaunchPlan& plan, const std::vector<TreeRoot>& roots);
  // Each top (WS/NAME) detached with everything beneath it, its mount point removed. Unmounting on
  // the seat propagates into the member, whose agent has ended by then.
  void release();

 private:
  std::vector<std::string> tops_;
};

}  // namespace asbx
