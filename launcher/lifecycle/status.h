// The status record (one JSON object, written to --status-file at the end) and the
// ledger line (the record plus containment facts, appended under a lock).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "base/plan.h"
#include "base/result.h"

namespace asbx {

nlohmann::json status_record(const LaunchPlan& plan, const SessionResult& result);
// A record for failures before any plan existed (bad flags, bad config).
nlohmann::json early_failure_record(const std::string& id, const Error& error);
// Writes atomically (temp file + rename); returns false and says why on stderr.
bool write_status_file(const std::string& path, const nlohmann::json& record);
// Appends one line under flock; a failure is a warning on stderr, never fatal.
// ONCE (when not empty): text whose presence in the ledger's last 256 KiB means the line is there
// already (written under the same lock), e.g. gc's orphan line for a container two gcs removed at once.
bool append_ledger(const std::string& path, const nlohmann::json& line, const std::string& once = "");

}  // namespace asbx
