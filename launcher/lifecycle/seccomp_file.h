// The session's seccomp profile on the seat's disk, where podman reads it at create: under the
// launcher's runtime dir, named by its digest (launcher/lifecycle/safe_files.h: written whole
// beside its place, renamed over it, never through a symlink).
#pragma once
#include "base/plan.h"

namespace asbx {

// Throws Error(seccomp_unavailable) when the plan has no profile or it cannot be written.
void write_seccomp_profile(const SeccompPlan& seccomp);

}  // namespace asbx
