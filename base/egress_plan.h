// The egress part of a plan as values: the rules a session may use, the seat owner's cap and
// what one session's proxy enforces. Deciding and parsing them is egress/'s (egress/policy.h).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/address.h"

namespace asbx {

struct EgressRule {
  std::string host;  // lowercase exact name, or "*.suffix"
  int port = 443;
  bool plain_http = false;  // http:// rule: forwarded requests, not CONNECT
  std::string text() const;  // as written back: [http://]HOST:PORT
  bool matches(const std::string& name, int port, bool plain_http) const;
  bool covers(const EgressRule& asked) const;  // a seat cap admitting `asked`
  bool operator==(const EgressRule&) const = default;
};

// The seat owner's [egress] table (only the seat config file sets it).
struct EgressSeat {
  std::optional<std::vector<EgressRule>> allow;  // absent: any public name
  std::map<std::string, std::string> hosts;      // name → address literal, before DNS
  std::vector<Cidr> private_ok;                  // non-public ranges allowed as destinations
  bool operator==(const EgressSeat&) const = default;
};

// What one session's proxy enforces; part of the LaunchPlan.
struct EgressPlan {
  bool enabled = false;
  std::vector<EgressRule> rules;
  std::map<std::string, std::string> hosts;
  std::vector<Cidr> private_ok;
  int port = 3128;                           // the door inside the container: 127.0.0.1:PORT
  std::int64_t idle_ms = 300'000;            // a connection with no byte either way for this long ends
  std::int64_t total_ms = 3'600'000;         // no connection lives longer
  int max_connections = 64;                  // open at once per session
  bool operator==(const EgressPlan&) const = default;
};

}  // namespace asbx
