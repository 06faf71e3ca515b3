// The session's side of state collection: after the agent ended, the runtime row's state
// paths are read through the HOME fd the launcher kept (it pins the container's tmpfs) and
// copied into DIR/<id>/ (or the seat's export area), every credential of the session —
// as staged, and as the CLI left its copy — kept out by content. See docs/STATE.md.
#pragma once
#include <vector>

#include "base/plan.h"
#include "base/state_report.h"
#include "launcher/state/walk.h"

namespace asbx {

StateReport collect_session_state(const LaunchPlan& plan, int home_fd, const std::vector<CredentialPrint>& staged);

}  // namespace asbx
