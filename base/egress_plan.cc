#include "base/egress_plan.h"

namespace asbx {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "*.suffix" admits "a.suffix" and "a.b.suffix", never "suffix" itself.
bool pattern_matches(const std::string& pattern, const std::string& name) {
  if (pattern.rfind("*.", 0) != 0) return pattern == name;
  std::string tail = pattern.substr(1);
  return name.size() > tail.size() && ends_with(name, tail);
}

}  // namespace

std::string EgressRule::text() const { return (plain_http ? "http://" : "") + host + ":" + std::to_string(port); }

bool EgressRule::matches(const std::string& name, int p, bool plain) const {
  return port == p && plain_http == plain && pattern_matches(host, name);
}

bool EgressRule::covers(const EgressRule& asked) const {
  if (port != asked.port || plain_http != asked.plain_http) return false;
  if (asked.host.rfind("*.", 0) != 0) return pattern_matches(host, asked.host);
  if (host.rfind("*.", 0) != 0) return false;  // an exact cap never admits a wildcard
  return asked.host == host || ends_with(asked.host, host.substr(1));
}

}  // namespace asbx
