#include "egress/decision.h"

#include <algorithm>

namespace asbx {

std::optional<std::string> decide_name(const EgressPlan& plan, const Destination& dest) {
  if (!dest.ok) return refusal::bad_request;
  if (parse_ip(dest.host)) return refusal::ip_literal;
  std::string name = normal_host_name(dest.host);
  if (name.empty()) return refusal::bad_request;
  for (const auto& rule : plan.rules)
    if (rule.matches(name, dest.port, dest.plain_http)) return std::nullopt;
  return refusal::not_allowed;
}

std::optional<std::string> check_host_field(const RequestHead& head, const Destination& dest) {
  std::string field = head.header("host");
  if (field.empty()) return std::nullopt;  // HTTP/1.0 without Host: the URI says it all
  RequestHead probe;
  probe.status = RequestHead::Status::ok;
  probe.method = "CONNECT";
  probe.target = field.find(':') == std::string::npos || field.back() == ']' ? field + ":80" : field;
  Destination said = destination_of(probe);
  if (!said.ok || normal_host_name(said.host) != normal_host_name(dest.host) || said.port != dest.port)
    return refusal::host_mismatch;
  return std::nullopt;
}

std::optional<IpAddress> static_address(const EgressPlan& plan, const std::string& host) {
  auto it = plan.hosts.find(normal_host_name(host));
  if (it == plan.hosts.end()) return std::nullopt;
  return parse_ip(it->second);
}

std::optional<std::string> check_addresses(const EgressPlan& plan, const std::vector<IpAddress>& addresses) {
  if (addresses.empty()) return refusal::unresolved;
  for (const auto& a : addresses) {
    if (non_public_range(a).empty()) continue;
    bool excepted = std::any_of(plan.private_ok.begin(), plan.private_ok.end(), [&](const Cidr& c) { return c.contains(a); });
    if (!excepted) return refusal::private_address;
  }
  return std::nullopt;
}

std::optional<std::string> check_sni(const std::string& connect_host, const std::string& sni_name) {
  std::string want = normal_host_name(connect_host), got = normal_host_name(sni_name);
  if (got.empty() || want != got) return refusal::sni_mismatch;
  return std::nullopt;
}

}  // namespace asbx
