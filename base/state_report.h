// What state collection brought back, as the status record and the ledger say it.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace asbx {

struct StateSkip {
  std::string path;    // relative to HOME (the layout of DIR/<id>/)
  std::string reason;
  bool operator==(const StateSkip&) const = default;
};

// The record names at most this many skipped entries; the rest are counted.
inline constexpr std::size_t kMaxNamedSkips = 1000;

struct StateReport {
  bool collected = false;     // false: no state dir, or the agent never started ("state": null)
  std::string dir;            // DIR/<id> where the files are
  std::int64_t files = 0;
  std::int64_t bytes = 0;
  std::vector<StateSkip> skipped;
  std::int64_t skipped_unnamed = 0;
  std::string error;          // collection itself failed (the files so far stay)

  void skip(const std::string& path, const std::string& reason);
};

nlohmann::json state_json(const StateReport& report);
// The seat's report from its record (for the caller of a dispatched session); a
// missing or malformed one gives an empty report.
StateReport state_from_json(const nlohmann::json& j);

}  // namespace asbx
