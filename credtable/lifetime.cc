#include "credtable/lifetime.h"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace asbx {
namespace {

using nlohmann::json;

// The value at "a.b" (or the JWT claim at "a.b@claim"); nullptr json when absent.
json lookup(const json& doc, const std::string& path) {
  std::string members = path.substr(0, path.find('@'));
  const json* at = &doc;
  std::stringstream parts(members);
  for (std::string part; std::getline(parts, part, '.');) {
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &(*at)[part];
  }
  if (path.find('@') == std::string::npos) return *at;
  if (!at->is_string()) return nullptr;
  std::string jwt = at->get<std::string>();
  auto a = jwt.find('.'), b = jwt.find('.', a == std::string::npos ? a : a + 1);
  if (a == std::string::npos || b == std::string::npos) return nullptr;
  auto payload = base64url_decode(jwt.substr(a + 1, b - a - 1));
  if (!payload) return nullptr;
  json claims = json::parse(*payload, nullptr, false);
  std::string claim = path.substr(path.find('@') + 1);
  return claims.is_object() && claims.contains(claim) ? claims[claim] : json(nullptr);
}

bool present(const json& v) { return !v.is_null() && !(v.is_string() && v.get<std::string>().empty()); }

std::optional<std::int64_t> as_time(const json& v, const std::string& unit) {
  if (!v.is_number()) return std::nullopt;
  double n = v.get<double>() / (unit == "ms" ? 1000 : 1);
  if (n > 1e13) n = 1e13;  // far beyond any real expiry; keeps the cast defined
  if (n < -1e13) n = -1e13;
  return static_cast<std::int64_t>(n);
}


std::string account_of(const LifetimeRule& rule, const json& doc) {
  for (const auto& path : rule.account) {
    json v = lookup(doc, path);
    if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
  }
  return "";
}

// When the CLI itself will refresh: its skew before the expiry, or its age rule.
std::int64_t refresh_at(const LifetimeRule& rule, const json& doc, std::int64_t expires) {
  std::int64_t at = expires - rule.refresh_skew_s;
  if (rule.refresh_stamp.empty() || rule.refresh_age_s <= 0) return at;
  json stamp = lookup(doc, rule.refresh_stamp);
  auto last = stamp.is_string() ? parse_rfc3339(stamp.get<std::string>()) : std::nullopt;
  return last ? std::min(at, *last + rule.refresh_age_s) : at;
}

}  // namespace

CredentialLifetime read_lifetime(const LifetimeRule& rule, const std::string& bytes) {
  CredentialLifetime out;
  json doc = json::parse(bytes, nullptr, false);
  if (!doc.is_object()) return out;
  std::string first = rule.expiry.substr(0, rule.expiry.find_first_of(".@"));
  if (!rule.expiry.empty() && present(lookup(doc, first))) {
    out.auth_kind = rule.oauth_kind;
    out.account = account_of(rule, doc);
    out.expires_unix = as_time(lookup(doc, rule.expiry), rule.expiry_unit);
    out.refresh_at_unix = out.expires_unix ? refresh_at(rule, doc, *out.expires_unix) : 0;
    return out;
  }
  if (!rule.api_key.empty() && present(lookup(doc, rule.api_key))) out.auth_kind = "api_key";
  out.account = account_of(rule, doc);
  return out;
}

std::string check_lifetime(const std::string& runtime, const LifetimeRule& rule, CredentialLifetime& lifetime,
                           const LifetimePolicy& policy) {
  if (!lifetime.refresh_at_unix) return "";
  std::int64_t window = policy.session_s + policy.margin_s;
  std::int64_t left = *lifetime.refresh_at_unix - policy.now_unix;
  if (left > window) return "";
  lifetime.refresh_due = true;
  if (policy.injected && lifetime.expires_unix && *lifetime.expires_unix - policy.now_unix > window) return "";
  if (policy.injected && lifetime.expires_unix) left = *lifetime.expires_unix - policy.now_unix;
  std::string account = lifetime.account.empty() ? "" : " (account " + lifetime.account + ")";
  std::string when = !lifetime.expires_unix ? "has no readable expiry and must be refreshed now"
                     : left <= 0            ? "must be refreshed now"
                                            : "must be refreshed in " + format_duration_s(left);
  std::string message = "the " + runtime + " credential" + account + " " + when +
                        ", before this session can end (" + policy.session_source + " + margin " +
                        format_duration_s(policy.margin_s) +
                        "); the CLI would refresh it inside the container and rotate the host's login. "
                        "Refresh it on the host first: " + rule.refresh_command;
  if (policy.refuse) throw Error(ErrorKind::credential_expiring, message);
  return message;
}

std::string format_duration_s(std::int64_t s) {
  if (s < 0) s = 0;
  char buf[48];
  if (s >= 86400) std::snprintf(buf, sizeof buf, "%lldd%02lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
  else if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm", (long long)(s / 60));
  else std::snprintf(buf, sizeof buf, "%llds", (long long)s);
  return buf;
}

std::optional<std::int64_t> parse_rfc3339(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &consumed) != 6)
    return std::nullopt;
  std::string rest = text.substr(static_cast<std::size_t>(consumed));
  std::size_t i = 0;
  if (i < rest.size() && rest[i] == '.')
    for (++i; i < rest.size() && rest[i] >= '0' && rest[i] <= '9';) ++i;
  rest = rest.substr(i);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::int64_t t = static_cast<std::int64_t>(::timegm(&tm));
  if (rest == "Z" || rest == "z") return t;
  int hh = 0, mm = 0;
  if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && std::sscanf(rest.c_str() + 1, "%2d:%2d", &hh, &mm) == 2)
    return t - (rest[0] == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
  return std::nullopt;
}

std::optional<std::string> base64url_decode(const std::string& text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
          : c == '-' || c == '+' ? 62 : c == '_' || c == '/' ? 63 : c == '=' ? -2 : -1;
    if (v == -2) break;
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace asbx
