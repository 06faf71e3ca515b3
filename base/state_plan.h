// The state part of a plan as values: where the runtime's state goes and the caps
// (the rules that judge what the agent left are state/'s, state/rules.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace asbx {

// Caps from the seat config ([state] max_files, max_bytes); the defaults are documented.
struct StateLimits {
  std::int64_t max_files = 10'000;          // regular files brought back
  std::int64_t max_bytes = 256LL << 20;     // their total size
  bool operator==(const StateLimits&) const = default;
};

// What a plan says about state: where it goes ("" = nothing is collected), which paths
// under HOME (the runtime row's `state`), and the caps.
struct StatePlan {
  std::string dir;                  // DIR; the session's files go to DIR/<id>/
  std::vector<std::string> paths;   // relative to HOME
  StateLimits limits;
  bool export_area = false;         // dir is the seat's export area (a dispatched session)
  bool operator==(const StatePlan&) const = default;
};

}  // namespace asbx
