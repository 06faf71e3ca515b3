// The NoNewPrivs preflight, executed: measure /proc/self/status, and when NoNewPrivs is 1
// re-exec this launcher through `systemd-run --user` (preflight/ decides, this file runs it).
// Programs are started only through preflight/spawn.cc (systemd-run, systemctl).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "preflight/nnp.h"

namespace asbx {

PreflightFacts current_preflight_facts();

// Runs before anything is created. nullopt: go on in this process. A value: the exit code
// of the re-exec'd launcher (its status record and ledger line are its own). Throws
// Error(seat_preflight | reexec_loop | systemd_run_failed | usage).
std::optional<int> preflight_or_reexec(const std::vector<std::string>& args, const std::string& session_id);

// --persist and the re-exec do not mix: the transient unit ends when its caller's terminal does,
// and with it a supervisor started inside. Throws Error(seat_preflight) when a re-exec is due.
void refuse_persist_reexec();

// What the status record says about the preflight of the launcher that ran the session.
nlohmann::json preflight_record();

// Runs `/usr/bin/systemctl --user ARGS...`; returns its exit status (127 if it could not run).
int systemctl_user(const std::vector<std::string>& args, bool quiet);

}  // namespace asbx
