// What the proxy decides, in order: the name against the list (before any DNS), then each
// resolved address against the non-public ranges, then the TLS name against the CONNECT host.
// Pure: resolution itself is the proxy's (proxy.cc), on the seat.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/address.h"
#include "egress/http_head.h"
#include "egress/policy.h"

namespace asbx {

// Reasons a destination is refused, as the record and the 403 name them.
namespace refusal {
inline constexpr const char* bad_request = "bad_request";        // not a proxy request we serve
inline constexpr const char* ip_literal = "ip_literal";          // an address instead of a name
inline constexpr const char* not_allowed = "not_allowed";        // the name is not on the list
inline constexpr const char* private_address = "private_address";  // resolved into a non-public range
inline constexpr const char* unresolved = "unresolved";          // no address for the name
inline constexpr const char* unreachable = "unreachable";        // no address answered the connect
inline constexpr const char* host_mismatch = "host_mismatch";    // Host field ≠ the URI's host
inline constexpr const char* sni_mismatch = "sni_mismatch";      // TLS name ≠ the CONNECT host
inline constexpr const char* sni_missing = "sni_missing";        // TLS without a name, or not TLS
inline constexpr const char* connection_limit = "connection_limit";  // answered without waiting, then closed
inline constexpr const char* head_timeout = "head_timeout";      // no complete request head within kHeadMs of accept
// Plain-HTTP forwarding (egress/http_forward.h), each before a byte goes upstream but pipelined:
inline constexpr const char* host_missing = "host_missing";      // HTTP/1.1 without a Host field
inline constexpr const char* host_repeated = "host_repeated";    // more than one Host field
inline constexpr const char* bad_framing = "bad_framing";        // CL+TE, CL repeated or not a number, TE in 1.0, a broken chunk
inline constexpr const char* unsupported_coding = "unsupported_coding";  // a transfer coding other than chunked (501)
inline constexpr const char* pipelined = "pipelined";            // bytes after the first request: never forwarded
}  // namespace refusal

// How long an accepted connection may take to send its whole request head (a CONNECT or a plain
// request): the real CLIs send it at once; a silent connection must not hold a slot for the idle
// limit (300 s).
inline constexpr std::int64_t kHeadMs = 10'000;

// nullopt = allowed so far (the name may be resolved); else the reason.
std::optional<std::string> decide_name(const EgressPlan& plan, const Destination& dest);
// A forwarded request's Host field must name the URI's host (and port, when not 80).
std::optional<std::string> check_host_field(const RequestHead& head, const Destination& dest);
// The static address from the seat's hosts table, if the name has one.
std::optional<IpAddress> static_address(const EgressPlan& plan, const std::string& host);
// nullopt when every address may be reached; private_address when any lies in a non-public
// range outside private_ok (one bad answer refuses the name: no rebinding between answers).
std::optional<std::string> check_addresses(const EgressPlan& plan, const std::vector<IpAddress>& addresses);
// The ClientHello's name against the CONNECT host (case-insensitive, trailing dot ignored).
std::optional<std::string> check_sni(const std::string& connect_host, const std::string& sni_name);

}  // namespace asbx
