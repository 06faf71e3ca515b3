// What one session's tripwire saw, as the status record and the ledger carry it:
//   {"network": [{protocol, destination, port, count, first_unix_ms}],
//    "dns": [{name, count, first_unix_ms}], "canaries": [{path, count, first_unix_ms}],
//    "first": "the first trip, described"}
// A part not armed is null. Thread-safe and bounded: at most kMaxEntries distinct entries per
// part; past that attempts count under "(other)", so a flood costs a count, not memory.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tripwire/answer.h"

namespace asbx {

class TripwireTally {
 public:
  // Each returns true for the first trip of its kind (tcp, udp, icmp, other, dns, canary):
  // the caller says that one on stderr, the record counts them all.
  bool attempt(const Attempt& a, std::int64_t now_unix_ms);
  bool canary(const std::string& path, std::int64_t now_unix_ms);  // relative to HOME; a listed directory ends in '/'
  std::string first() const;  // "" until something tripped
  nlohmann::json json(bool network_armed, bool canaries_armed) const;

  static constexpr std::size_t kMaxEntries = 256;

 private:
  struct Seen {
    std::int64_t count = 0, first_unix_ms = 0;
  };
  bool first_of_kind(int kind, const std::string& described);
  static void count(Seen& s, std::int64_t now);

  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, Seen> network_;  // protocol, destination, port (-1: none)
  std::map<std::string, Seen> dns_;
  std::map<std::string, Seen> canaries_;
  unsigned kinds_seen_ = 0;
  std::string first_;
};

// "~/.ssh/id_rsa opened" or "~/.ssh/ listed": a canary trip in words.
std::string describe_canary(const std::string& path);

}  // namespace asbx
