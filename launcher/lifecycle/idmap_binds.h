// user_namespace = "range" (plan/userns.h, docs/DECISIONS.md issue 34): runc 1.1 has no idmapped
// mounts, so the launcher makes them. Before create each bind of plan.isolation.idmapped_binds is
// cloned (open_tree), idmapped (mount_setattr with a user namespace that maps the agent's on-disk
// uid and gid onto its range ids and nothing else) and moved to its staging path in
// SESSION_DIR/tmpfs/, which the create body names as the source. After init the container holds its
// own copies: detach() unmounts every staging, so nothing of the owner's tree stays mounted in the
// session dir (gc's unmount_seat_tmpfs detaches what a killed launcher left, before any removal).
#pragma once
#include <string>
#include <vector>

#include "base/beneath.h"
#include "base/plan.h"

namespace asbx {

// The user namespace an idmapped bind of PLAN's goes through: only the agent's on-disk uid and gid,
// onto its range's host ids. Its fd keeps it. Throws Error(isolation_unavailable) naming the step.
UniqueFd agent_idmap_namespace(const LaunchPlan& plan);

// "" when a bind of `path` can be idmapped here (a clone of its mount takes MOUNT_ATTR_IDMAP; the
// clone is dropped at once, nothing is mounted), else what failed: doctor asks it of every root.
std::string idmap_problem(const std::string& path);

// Detaches each of PLACES (with what is mounted beneath it; a link is never followed) and removes
// its mount point, then empties PLACES: what a staging or a warm claim put in a seat dir.
void detach_places(std::vector<std::string>& places);

class IdmapBinds {
 public:
  IdmapBinds() = default;
  IdmapBinds(const IdmapBinds&) = delete;
  IdmapBinds& operator=(const IdmapBinds&) = delete;
  ~IdmapBinds() { detach(); }
  // Throws Error(isolation_unavailable) naming the bind and the step that failed (a filesystem
  // that cannot be idmapped: NFS, FUSE, ...); every staging made so far is gone then.
  void stage(const LaunchPlan& plan);
  void detach();

 private:
  std::vector<std::string> staged_;
};

}  // namespace asbx
