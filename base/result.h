// How a session ended, as the status record and the ledger tell it.
#pragma once
#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/git_report.h"
#include "base/state_report.h"

namespace asbx {

struct KillCounters {
  bool oom_killed = false;        // any process in the container was OOM-killed
  std::int64_t oom_kills = 0;
  std::int64_t pids_refused = 0;  // forks refused by the pids limit
  std::int64_t memory_peak_bytes = -1;
  std::int64_t pids_peak = -1;
  std::int64_t cpu_usage_ns = -1;
  std::string cgroup_version;     // "v1", "v2" or "" when unread
};

struct SessionResult {
  std::string outcome = "launcher_error";  // "exited" | "launcher_error" | "killed"
  int exit_code = 0;                       // what the launcher returned
  std::optional<int> agent_exit_code;
  std::optional<ErrorKind> error_kind;
  std::string message;
  std::string cause;  // "" (null) | "oom" | "pids" | "timeout" | "signal" | "tripwire" | "disk"
  int signal = 0;     // the signal the caller sent, when cause == "signal"
  KillCounters counters;
  bool limits_enforced = true;
  std::vector<std::string> warnings;
  std::string container_id;
  bool container_removed = false;  // removed, or (removal "deferred") handed to the session's remover
  std::string removal;             // "" (removed by the launcher, or not) | "deferred"
  std::string path = "cold";       // "warm": a pool member was claimed (docs/DECISIONS.md "Issue 37: the warm pool")
  std::string path_reason;         // cold: why no member was taken ("" when the pool was not asked)
  bool credential_refreshed_in_container = false;
  std::vector<bool> credentials_refreshed;  // per plan.credentials entry (launcher/lifecycle/home.cc)
  // Inject mode (the wall's counters, launcher/wall/wall.h): requests whose placeholder was
  // swapped, per host; token requests answered by the wall; placeholders seen elsewhere.
  std::map<std::string, std::int64_t> injected;
  std::int64_t refreshes_answered = 0;
  std::int64_t placeholder_elsewhere = 0;
  // The end-of-session secret scan: where a real token value was found (paths, never the value).
  std::vector<std::string> credential_exposed;
  bool exposure_scanned = false;
  StateReport state;  // what of the agent's state came back (docs/STATE.md)
  GitReport git;      // the workspace's git after the agent (docs/MOUNTS.md, "After the agent")
  std::int64_t started_unix = 0;
  std::int64_t setup_ms = 0;  // until the agent started
  std::int64_t run_ms = 0;    // the agent's own run
  std::int64_t total_ms = 0;
  // Where the time went, step by step, in order (gc, image, create, init, checks, attach, start,
  // agent, wait, conclude, remove, and git with a workspace): the record's durations_ms.phases.
  std::vector<std::pair<std::string, std::int64_t>> phase_ms;
  nlohmann::json egress;  // null without --egress; else egress/tally.h's record
  std::int64_t output_truncated = 0;  // past the capture log's bound (--capture-log-max)
  nlohmann::json disk;      // launcher/lifecycle/disk_watch.h's record: budget, floor, peak, how kept
  nlohmann::json tripwire;  // null when the seat turned it off; else launcher/wall/tripwire.h's record
  nlohmann::json seccomp;   // the refused calls on record (launcher/lifecycle/seccomp_recorder.h); null: no profile
};

// A launcher failure recorded into a result (outcome, code, kind, message).
void record_error(SessionResult& result, const Error& error);

}  // namespace asbx
