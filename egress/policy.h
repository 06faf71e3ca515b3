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
#include "base/egress_plan.h"

namespace toml { inline namespace v3 { class node; } }

namespace asbx {

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
