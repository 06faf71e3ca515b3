// The session's seccomp profile on the seat's disk, where podman reads it at create: under the
// launcher's runtime dir, named by its digest (launcher/lifecycle/safe_files.h: written whole
// beside its place, renamed over it, never through a symlink).
#pragma once
#include "base/plan.h"

namespace asbx {

// Throws Error(seccomp_unavailable) when the plan has no profile or it cannot be written.
void write_seccomp_profile(const SeccompPlan& seccomp);
// podman reads the profile at create and keeps it in the container's spec: the file goes then
// (and on every failure of create), so a session leaves nothing in the runtime dir.
void remove_seccomp_profile(const SeccompPlan& seccomp);

// The profile for the length of one create: written now, removed when this goes.
struct SeccompProfileForCreate {
  explicit SeccompProfileForCreate(const SeccompPlan& s) : seccomp(s) { write_seccomp_profile(s); }
  ~SeccompProfileForCreate() { remove_seccomp_profile(seccomp); }
  SeccompProfileForCreate(const SeccompProfileForCreate&) = delete;
  SeccompProfileForCreate& operator=(const SeccompProfileForCreate&) = delete;
  const SeccompPlan& seccomp;
};

}  // namespace asbx
