// Can the container user use what is mounted for it? Checked between `init` and `start`
// inside the container's own root (the image's directories are what the agent walks
// through, e.g. the image's /root is 0700): every directory on the way to a bind must be
// searchable by the container user, and a read-write bind (the workspace, the git dirs a
// commit writes) writable. A session whose workspace or git the agent cannot use is
// refused before anything of it runs (workspace_rejected / git_unmountable with the remedy).
#pragma once
#include "launcher/podman/container_root.h"
#include "base/plan.h"

namespace asbx {

// Throws Error(workspace_rejected | git_unmountable) naming the path, its owner and mode,
// and the remedy.
void check_mounts_usable(const ContainerRoot& root, const LaunchPlan& plan);

}  // namespace asbx
