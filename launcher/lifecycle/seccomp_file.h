// The session's seccomp profile on the seat's disk, where podman reads it at create: under the
// launcher's runtime dir, named by its digest (launcher/lifecycle/safe_files.h: written whole
// beside its place, renamed over it, never through a symlink). The writer holds an exclusive
// flock on it from its first byte to its removal, so gc can tell a killed launcher's file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/beneath.h"
#include "base/plan.h"

namespace asbx {

// The written file's fd, flocked exclusively until it is closed.
// Throws Error(seccomp_unavailable) when the plan has no profile or it cannot be written.
UniqueFd write_seccomp_profile(const SeccompPlan& seccomp);
// podman reads the profile at create and keeps it in the container's spec: the file goes then
// (and on every failure of create), so a session leaves nothing in the runtime dir.
void remove_seccomp_profile(const SeccompPlan& seccomp);

// The profile for the length of one create: written now, removed when this goes.
struct SeccompProfileForCreate {
  explicit SeccompProfileForCreate(const SeccompPlan& s) : seccomp(s), held(write_seccomp_profile(s)) {}
  ~SeccompProfileForCreate() { remove_seccomp_profile(seccomp); }
  SeccompProfileForCreate(const SeccompProfileForCreate&) = delete;
  SeccompProfileForCreate& operator=(const SeccompProfileForCreate&) = delete;
  const SeccompPlan& seccomp;
  UniqueFd held;
};

// A profile is stale when nobody holds its lock and it is older than this (a writer takes the
// lock on the fresh file it just made, so a young file may be one whose lock is not taken yet).
constexpr std::int64_t kStaleProfileSeconds = 60;

// Removes the profiles (and their temporaries) a killed launcher left in `runtime_dir`: regular
// files named seccomp-*.json or seccomp-*.json.tmp.*, unlocked, older than kStaleProfileSeconds.
// Returns their names. Never follows a symlink; an unreadable dir removes nothing.
std::vector<std::string> collect_stale_profiles(const std::string& runtime_dir, std::int64_t now_unix);

}  // namespace asbx
