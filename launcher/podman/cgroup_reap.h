// What a container's removal must leave: an empty cgroup. Under gVisor podman's answer is not
// proof (a removal sent to a podman that did not know the runsc wrappers dropped the container
// while the sandbox ran on, invisible to ps and gc: docs/THREATS.md), so after the removal the
// launcher looks at the container's pids cgroup itself and kills whatever is still in it.
#pragma once
#include <string>

#include "base/result.h"
#include "launcher/podman/cgroup_counters.h"

namespace asbx {

struct ReapResult {
  int found = 0;       // tasks still in the cgroup after the removal (0: podman's answer held)
  bool empty = true;   // the cgroup is gone or empty now
};

// Every task still in `at`'s pids cgroup SIGKILLed (the cgroup frozen meanwhile where it has a
// freezer, so none forks or exits under a reused pid), until it is empty or `ms` passed.
// A cgroup dir that no longer exists is empty.
ReapResult reap_cgroup(const CgroupLocation& at, int ms);

// That, after a gVisor session's container was removed: what was found is a warning in the
// record, and `container_removed` is false when something could not be killed within 2 s.
void reap_after_removal(const CgroupLocation& at, SessionResult& result);

}  // namespace asbx
