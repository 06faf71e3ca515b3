#include "credtable/env_policy.h"

#include <algorithm>
#include <cctype>

namespace asbx {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool passes_allowlist(const std::string& name, const std::vector<std::string>& extra) {
  static const std::vector<std::string> fixed = {"TERM", "LANG", "TZ", "COLORTERM"};
  if (std::find(fixed.begin(), fixed.end(), name) != fixed.end()) return true;
  if (name.rfind("LC_", 0) == 0) return true;
  return std::find(extra.begin(), extra.end(), name) != extra.end();
}

}  // namespace

bool is_secret_looking(const std::string& raw) {
  std::string name = raw;
  // toupper takes an unsigned char's value: a plain char above 0x7f would be negative (UB).
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  static const std::vector<std::string> tails = {"_TOKEN", "_KEY", "_SECRET", "_PASSWORD", "_PASSWD",
                                                 "_CREDENTIALS", "_AUTH", "_COOKIE", "_PASS"};
  for (const auto& tail : tails)
    if (ends_with(name, tail)) return true;
  static const std::vector<std::string> exact = {"SSH_AUTH_SOCK", "TOKEN", "PASSWORD", "SECRET", "API_KEY",
                                                 "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "NETRC"};
  if (std::find(exact.begin(), exact.end(), name) != exact.end()) return true;
  for (const char* part : {"TOKEN", "SECRET", "PASSWORD", "APIKEY", "API_KEY", "PRIVATE_KEY"})
    if (name.find(part) != std::string::npos) return true;
  return false;
}

std::vector<std::pair<std::string, std::string>> container_env(const std::map<std::string, std::string>& environ,
                                                               const std::vector<std::string>& extra_names) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", "/sandbox/home"},
      {"USER", "agent"},
  };
  for (const auto& [name, value] : environ)
    if (passes_allowlist(name, extra_names) && !is_secret_looking(name)) env.emplace_back(name, value);
  return env;
}

}  // namespace asbx
