// The libpod SpecGenerator body for POST /libpod/containers/create, from a plan.
// Pure. Every field here was verified from inside a container (see docs/ARCHITECTURE.md).
#pragma once
#include <nlohmann/json.hpp>

#include "base/plan.h"

namespace asbx {

nlohmann::json create_body(const LaunchPlan& plan);
// The plan as printed by --dry-run: the exact create body plus what is not in it.
nlohmann::json plan_json(const LaunchPlan& plan);

}  // namespace asbx
