// What one session's refused calls were, as the status record and the ledger carry it:
//   {"refused": N, "calls": {"unshare": n, ...}, "socket_families": {"AF_ALG": n, ...},
//    "other": n, "first": "socket(AF_ALG)", "first_unix_ms": ms}
// Fixed counters (one per call of the table, one per family bucket): a flood of millions costs
// counts, never memory. Written by the recorder's one thread, read after it stopped.
// gVisor: a refusal `by_arguments` (the log cannot tell the profile's from the agent's own filter's)
// is counted apart, per call, and is never the first: {"socket": n, ...} in unattributed_json().
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seccomp/notify_match.h"

namespace asbx {

class RefusalTally {
 public:
  RefusalTally();
  bool count(const RefusedCall& call, std::int64_t now_unix_ms);  // true for the session's first
  nlohmann::json unattributed_json() const;
  std::int64_t total() const { return total_; }
  const std::string& first() const { return first_; }
  nlohmann::json json() const;

 private:
  std::vector<std::int64_t> calls_;         // per recorded_call_names()
  std::vector<std::int64_t> unattributed_;  // the same, for refusals by_arguments
  std::array<std::int64_t, kFamilyBuckets> families_{};
  std::int64_t other_ = 0, total_ = 0, first_unix_ms_ = 0;
  std::string first_;
};

}  // namespace asbx
