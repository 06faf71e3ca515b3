// The mechanism: executes a LaunchPlan against podman's REST API.
// create → (limits check) → init → (mounts, command, credentials checked/staged inside)
// → attach → start → pump stdio → wait → inspect → delete.
#pragma once
#include <cstdint>
#include <functional>
#include "base/plan.h"
#include "base/result.h"
#include "launcher/pool/take.h"

namespace asbx {

struct StdioFds {
  int in = 0;
  int out = 1;
  int err = 2;
  // The capture log (or sandbox-run --capture-stdout): at most this many bytes of the agent's
  // output are written; the rest is counted in the record (capture_log_truncated_bytes). -1 = none.
  std::int64_t out_max = -1;
};

// Never throws: every failure becomes a launcher_error result, and the container
// (if one was created) is removed before this returns — unless `defer_removal` and the session
// ended cleanly with its exit code read from conmon's exit file: then the result's `removal` is
// "deferred" and the caller hands the container to hand_off_removal (podman/deferred_removal.h).
// WARM: a claimed pool member (launcher/pool/take.h) the session starts instead of creating one.
// BEFORE_ATTACH: called once the checks are done, before the attach and start (a warm session
// waits there for the gc it runs beside its claim).
SessionResult run_session(const LaunchPlan& plan, const StdioFds& io, bool defer_removal = false, WarmMember* warm = nullptr,
                          const std::function<void()>& before_attach = {});

}  // namespace asbx
