// The status record's and the ledger's `credentials`: per staged credential its runtime,
// file, auth kind, account and time to expiry, and whether the CLI refreshed it inside
// (and whether that was expected). Never a token value: only what credtable/lifetime.h read.
#pragma once
#include <nlohmann/json.hpp>

#include "base/plan.h"
#include "base/result.h"

namespace asbx {

nlohmann::json credentials_json(const LaunchPlan& plan, const SessionResult& result);
// null when nothing was refreshed inside; else whether every refresh was expected.
// The secret scan's findings: null when no scan ran (copy mode), else [{"where": PATH}, ...].
nlohmann::json exposed_json(const SessionResult& result);
nlohmann::json refresh_expected_json(const LaunchPlan& plan, const SessionResult& result);

}  // namespace asbx
