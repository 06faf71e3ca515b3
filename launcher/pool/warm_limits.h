// A warm member is made with the seat's limits; a session that asks for others (--memory, --pids,
// --cpus) has them applied at claim (docs/DECISIONS.md "Issue 37: the warm pool"): podman's update
// changes the member's cgroup before start, and the cgroup's own files are read back, since
// podman 4.3.1 keeps create's figures in inspect. Any figure that is not the plan's refuses the
// session (limits_unenforced) before the agent runs; the member is then removed as a failed
// session's container. Nothing is asked of podman when the limits are the member's already.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "base/plan.h"
#include "launcher/podman/cgroup_counters.h"
#include "launcher/podman/podman_api.h"

namespace asbx {

// true when it applied anything. WANT: the plan's create body's resource_limits; HAD: the member's.
bool apply_warm_limits(PodmanApi& api, const std::string& id, const nlohmann::json& want, const std::string& had,
                       const CgroupLocation& at);

// The first figure in AT's files that is not WANT's ("memory.limit_in_bytes is 2147483648, not
// 1073741824"), or "". Pure: READ reads the files (cgroup_monitor.h's read_small_file).
std::string limits_mismatch(const nlohmann::json& want, const CgroupLocation& at, const ReadFile& read);

}  // namespace asbx
