// The egress policy: which host names a session may reach, on which ports, and the seat
// owner's cap, static names and private exceptions. Pure; no sockets, no DNS.
//
//   --egress HOST[:PORT]       a TLS destination reached through CONNECT (port 443 unless said)
//   --egress http://HOST[:PORT] plain HTTP forwarded by the proxy (port 80 unless said)
//   --egress default           the runtime row's `egress` list (credtable/credtable.toml)
// HOST is an exact name or `*.suffix` (any name below suffix, not suffix itself). IP literals
// are never a destination. The seat config's [egress] allow caps what callers may ask for.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/address.h"

namespace toml { inline namespace v3 { class node; } }

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

// Throws Error(kind) "ORIGIN: 'SPEC' ..." when spec is not a rule.
EgressRule parse_egress_rule(const std::string& spec, const std::string& origin, bool config_error);
// The seat config's [egress] table; errors are Error(config) naming file:line.
EgressSeat parse_egress_seat(const toml::node& node, const std::string& path);
// The session's plan from the caller's --egress values (`default` expands to row_rules, which
// `row_name` names in messages); every rule must be covered by the seat's allow.
EgressPlan plan_egress(const std::vector<std::string>& asked, const std::vector<std::string>& row_rules,
                       const std::string& row_name, const EgressSeat& seat, const std::string& seat_source);
// Lowercase, one trailing dot dropped; "" when not a host name (letters, digits, '-', '.', '_').
std::string normal_host_name(const std::string& name);

}  // namespace asbx
