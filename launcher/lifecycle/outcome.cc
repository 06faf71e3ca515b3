#include "launcher/lifecycle/outcome.h"

#include <algorithm>
#include <csignal>

#include "base/units.h"
#include "base/util.h"
#include "launcher/podman/cgroup_counters.h"

namespace asbx {

namespace {

void killed(SessionResult& r, ErrorKind kind, const std::string& message) {
  record_error(r, Error(kind, message));
  r.outcome = "killed";
}

// Containment events the agent may have survived are said on stderr (and recorded).
void note_survived_events(SessionResult& r, const LaunchPlan& plan) {
  const KillCounters& c = r.counters;
  if (c.oom_killed && r.error_kind != ErrorKind::killed_oom)
    r.warnings.push_back("the kernel killed " + std::to_string(std::max<std::int64_t>(c.oom_kills, 1)) +
                         " process(es) of the session: out of memory (limit " + format_size(plan.limits.memory_bytes) + ")");
  // The seccomp profile admits the native ABI only: a call from i386 or x32 gets the kernel's
  // SIGSYS, which the recorder never sees (seccomp/profile.cc, docs/THREATS.md "The kernel").
  if (r.outcome == "exited" && r.exit_code == 128 + SIGSYS)
    r.warnings.push_back("the agent's exit code 159 is a process killed by SIGSYS: a call the seccomp profile does "
                         "not admit at all (the i386 or x32 ABI: int 0x80, a 32-bit program), or the agent's own "
                         "exit 159");
  if (c.pids_refused > 0 && r.error_kind != ErrorKind::killed_pids)
    r.warnings.push_back("the pids limit of " + std::to_string(plan.limits.pids) + " refused " +
                         std::to_string(c.pids_refused) + " fork(s)");
}

}  // namespace

void decide_outcome(SessionResult& r, const LaunchPlan& plan, int code, const WallEndings& walls) {
  if (r.cause.empty() && !walls.tripwire.empty()) r.cause = "tripwire";
  if (r.cause.empty() && !walls.disk.empty()) r.cause = "disk";
  r.cause = decide_cause(r.cause, r.counters);
  if (code < 0 && r.cause.empty()) throw Error(ErrorKind::internal, "podman reported no exit code for the container");
  if (code >= 0) r.agent_exit_code = code;
  if (r.cause == "timeout") {
    killed(r, ErrorKind::killed_timeout, "killed: the session's timeout of " + std::to_string(plan.timeout_ms) + " ms passed");
  } else if (r.cause == "tripwire") {
    killed(r, ErrorKind::tripwire, "killed by the tripwire at its first trip: " + walls.tripwire + " (tripwire = \"kill\" in " +
                                       plan.tripwire.source + ")");
  } else if (r.cause == "disk") {
    killed(r, ErrorKind::killed_disk, walls.disk_message);
  } else if (r.cause == "signal") {
    r.outcome = "killed";
    r.exit_code = 128 + r.signal;
    r.message = "stopped: the launcher received signal " + std::to_string(r.signal);
  } else if (r.cause == "pids" && plan.isolation.wall == "gvisor") {
    // A sandbox that could not make a task of its own does not go on: runsc exits (2 here).
    killed(r, ErrorKind::killed_pids,
           "killed: the gVisor sandbox reached the session's pids limit (" + std::to_string(plan.isolation.sandbox_pids) +
               " of the seat's pids for --pids " + std::to_string(plan.limits.pids) + "); runsc ended it" +
               (code >= 0 ? " with " + std::to_string(code) : std::string()));
  } else if (r.cause == "oom" && (code == 128 + SIGKILL || plan.isolation.wall == "gvisor")) {
    // gVisor: the seat's OOM killer ends the whole sandbox, whatever code runsc then reports.
    killed(r, ErrorKind::killed_oom,
           "killed: out of memory (the session's memory limit of " + format_size(plan.limits.memory_bytes) + ")");
  } else {
    r.outcome = "exited";
    r.exit_code = code;
  }
  note_survived_events(r, plan);
}

void note_output_bounds(SessionResult& r, const PumpResult& pumped, std::int64_t out_max) {
  r.output_truncated = pumped.output_truncated;
  if (pumped.output_truncated > 0)
    r.warnings.push_back("the capture log reached its bound of " + format_size(out_max) + ": " +
                         std::to_string(pumped.output_truncated) + " further bytes of the agent's output were left out");
  if (pumped.output_dropped > 0)
    r.warnings.push_back("the caller stopped reading: " + std::to_string(pumped.output_dropped) +
                         " bytes of the agent's output were not delivered");
}

void note_sweep_incomplete(SessionResult& r) {
  if (r.git.unswept.empty()) return;
  std::string what = join(r.git.unswept, "; ");
  if (r.error_kind) {
    r.warnings.push_back("git: the check after the session is incomplete: " + what);
    return;
  }
  record_error(r, Error(ErrorKind::sweep_incomplete, "the check after the session could not sweep or set aside what the agent left: " +
                                                         what + "; do not run git or programs in the workspace before removing it"));
}

}  // namespace asbx
