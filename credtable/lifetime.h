// What a credential file says about its own lifetime: its auth kind, the account it
// belongs to, and when its CLI will refresh it. Pure: the file's bytes in, facts out.
// Nothing returned or thrown here ever holds a token: only kinds, accounts (an email or
// an account id) and times.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/plan.h"

namespace asbx {

// Per credtable row (credtable.toml): where the expiry lives and the CLI's refresh rule.
// Paths are JSON member names joined by '.'; "a.b@exp" = the claim `exp` of the JWT
// (a string) at a.b.
struct LifetimeRule {
  std::string expiry;                 // path of the expiry; "" = the row knows none
  std::string expiry_unit = "s";      // "s" or "ms" since the epoch
  std::string oauth_kind = "oauth";   // the kind when the expiry's first member is there
  std::string api_key;                // path of an API key: present (and no expiry) → api_key
  std::vector<std::string> account;   // paths of the account identity, first present wins
  std::int64_t refresh_skew_s = 0;    // the CLI refreshes this long before the expiry
  std::string refresh_stamp;          // path of an RFC 3339 time of the last refresh
  std::int64_t refresh_age_s = 0;     // ... and refreshes when that is older than this
  std::string refresh_command;        // the host-side command that gets fresh tokens
  bool operator==(const LifetimeRule&) const = default;
};

// Reads the file's bytes. A file that is not JSON, or matches neither the expiry nor the
// API key, is kind "unknown" with no expiry. An OAuth file whose expiry cannot be read
// has refresh_at_unix 0 (due: fail closed).
CredentialLifetime read_lifetime(const LifetimeRule& rule, const std::string& bytes);

// The seat's rule (seat config: credential_horizon, credential_margin, credential_expiring).
struct LifetimePolicy {
  std::int64_t now_unix = 0;
  std::int64_t session_s = 0;      // --timeout, else the seat's horizon
  std::string session_source;      // "--timeout 1h" or "credential_horizon 4h (no --timeout)"
  std::int64_t margin_s = 0;
  bool refuse = true;              // false: credential_expiring = "warn"
  // Inject mode: the CLI's refresh inside is answered by the wall (the host's login never
  // rotates), so what must outlast the session is the real token's expiry, not its refresh time.
  bool injected = false;
};

// Sets lifetime.refresh_due. A refresh due (inject mode: an expiry) before now + session + margin throws
// Error(credential_expiring) naming the runtime, the account, the time left and the
// remedy; with refuse = false it returns that text as a warning instead. "" = fine.
std::string check_lifetime(const std::string& runtime, const LifetimeRule& rule, CredentialLifetime& lifetime,
                           const LifetimePolicy& policy);

// 45s, 25m, 1h05m, 3d04h (rounded down; negative → 0s).
std::string format_duration_s(std::int64_t seconds);
// "2025-06-01T12:34:56.123Z", "...+02:00" → unix seconds; nullopt when malformed.
std::optional<std::int64_t> parse_rfc3339(const std::string& text);
// base64url (no padding needed) → bytes; nullopt on a bad character.
std::optional<std::string> base64url_decode(const std::string& text);

}  // namespace asbx
