// What one session's refused calls were, as the status record and the ledger carry it:
//   {"refused": N, "calls": {"unshare": n, ...}, "socket_families": {"AF_ALG": n, ...},
//    "other": n, "first": "socket(AF_ALG)", "first_unix_ms": ms}
// Fixed counters (one per call of the table, one per family bucket): a flood of millions costs
// counts, never memory. Written by the recorder's one thread, read after it stopped.
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
  std::int64_t total() const { return total_; }
  const std::string& first() const { return first_; }
  nlohmann::json json() const;

 private:
  std::vector<std::int64_t> calls_;  // per recorded_call_names()
  std::array<std::int64_t, kFamilyBuckets> families_{};
  std::int64_t other_ = 0, total_ = 0, first_unix_ms_ = 0;
  std::string first_;
};

}  // namespace asbx
