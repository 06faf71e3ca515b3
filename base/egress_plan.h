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

// Inject mode (docs/CREDENTIALS.md): a host whose TLS the wall terminates. On an inject host it
// swaps the placeholder in the request's Authorization/x-api-key for the real value; a refresh
// host's token endpoint it answers itself with fresh placeholders (nothing goes upstream).
// Where the container finds the session CA's certificate (public part only).
inline constexpr const char* kSessionCaDir = "/sandbox/ca";
inline constexpr const char* kSessionCaPath = "/sandbox/ca/session-ca.pem";

struct InjectHost {
  std::string host;                 // normalised (lowercase, no trailing dot)
  std::string runtime;              // the credtable row it came from
  bool refresh = false;             // a token endpoint host: answered locally, never forwarded
  std::vector<std::string> allow;   // path rules: "/exact" or "/prefix/" (a request must match one)
  std::vector<std::string> deny;    // path prefixes refused even when allowed (case-insensitive)
  std::string token_path;           // refresh hosts: the endpoint the wall answers (POST)
  std::string token_answer;         // refresh hosts: "openai" or "anthropic" (the answer's shape)
  bool operator==(const InjectHost&) const = default;
};

// The seat owner's [egress] table (only the seat config file sets it).
struct EgressSeat {
  std::optional<std::vector<EgressRule>> allow;  // absent: any public name
  std::map<std::string, std::string> hosts;      // name → address literal, before DNS
  std::vector<Cidr> private_ok;                  // non-public ranges allowed as destinations
  bool inject = true;                            // inject mode for rows that support it (docs/CREDENTIALS.md)
  std::string upstream_ca;                       // extra CA (PEM) trusted for the wall's upstream TLS
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
  std::vector<InjectHost> inject;            // hosts whose TLS the wall terminates (empty: copy mode)
  std::string upstream_ca;                   // the seat's extra CA for the upstream TLS leg
  std::int64_t leaf_lifetime_s = 24 * 3600;  // the session CA's and its leaves' lifetime (≤ the session)
  bool operator==(const EgressPlan&) const = default;
};

}  // namespace asbx
