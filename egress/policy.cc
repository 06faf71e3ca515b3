#include "egress/policy.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "base/toml_util.h"
#include "base/util.h"

namespace asbx {
namespace {

bool is_label_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

std::optional<int> parse_port(const std::string& text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int port = std::stoi(text);
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

}  // namespace

std::string normal_host_name(const std::string& name) {
  std::string n = name;
  if (!n.empty() && n.back() == '.') n.pop_back();
  if (n.empty() || n.size() > 253 || n.front() == '.' || n.find("..") != std::string::npos) return "";
  for (char& c : n) {
    if (c != '.' && !is_label_char(c)) return "";
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return n;
}

EgressRule parse_egress_rule(const std::string& spec, const std::string& origin, bool config_error) {
  auto bad = [&](const std::string& why) -> EgressRule {
    bool printable = std::all_of(spec.begin(), spec.end(), [](char c) { return c > 0x20 && c < 0x7f; });
    throw Error(config_error ? ErrorKind::config : ErrorKind::usage,
                origin + ": " + (printable ? "'" + spec + "' " : "the value ") + why);
  };
  EgressRule rule;
  std::string rest = spec;
  if (rest.rfind("http://", 0) == 0) {
    rule.plain_http = true;
    rule.port = 80;
    rest = rest.substr(7);
  } else if (rest.find("://") != std::string::npos) {
    return bad("is not HOST[:PORT]: the only scheme is http:// (TLS needs none)");
  }
  if (parse_ip(rest)) return bad("is an IP address: egress names hosts, never addresses");
  if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    auto port = parse_port(rest.substr(colon + 1));
    if (!port) return bad("has no port between 1 and 65535 after ':'");
    rule.port = *port;
    rest = rest.substr(0, colon);
  }
  if (parse_ip(rest)) return bad("is an IP address: egress names hosts, never addresses");
  bool wildcard = rest.rfind("*.", 0) == 0;
  std::string name = normal_host_name(wildcard ? rest.substr(2) : rest);
  if (name.empty() || (wildcard && name.find('.') == std::string::npos))
    return bad("is not a host name or *.domain (letters, digits, '-', '.'; a wildcard needs a dotted domain)");
  rule.host = (wildcard ? "*." : "") + name;
  return rule;
}

EgressSeat parse_egress_seat(const toml::node& node, const std::string& path) {
  const auto* table = node.as_table();
  if (!table) throw Error(ErrorKind::config, where(path, node) + ": 'egress' must be a table");
  EgressSeat seat;
  for_each_key(*table, path, {
      {"allow", [&](const toml::node& n) {
         seat.allow.emplace();
         for (const auto& s : get_strings(n, path, "allow")) seat.allow->push_back(parse_egress_rule(s, where(path, n) + ": allow", true));
       }},
      {"hosts", [&](const toml::node& n) {
         const auto* hosts = n.as_table();
         if (!hosts) throw Error(ErrorKind::config, where(path, n) + ": 'hosts' must be a table of name = \"address\"");
         for (const auto& [key, value] : *hosts) {
           std::string name = normal_host_name(std::string(key.str()));
           auto address = value.value<std::string>();
           if (name.empty() || !address || !parse_ip(*address))
             throw Error(ErrorKind::config, where(path, value) + ": hosts: '" + std::string(key.str()) +
                                                "' must be a host name mapped to an IP address literal");
           seat.hosts[name] = *address;
         }
       }},
      {"inject", [&](const toml::node& n) { seat.inject = get_bool(n, path, "inject"); }},
      {"upstream_ca", [&](const toml::node& n) {
         seat.upstream_ca = get_string(n, path, "upstream_ca");
         if (seat.upstream_ca.empty() || seat.upstream_ca[0] != '/')
           throw Error(ErrorKind::config, where(path, n) + ": upstream_ca must be an absolute path to a PEM file");
       }},
      {"private_ok", [&](const toml::node& n) {
         for (const auto& s : get_strings(n, path, "private_ok")) {
           auto cidr = parse_cidr(s);
           if (!cidr) throw Error(ErrorKind::config, where(path, n) + ": private_ok: '" + s + "' is not ADDRESS/PREFIX");
           seat.private_ok.push_back(*cidr);
         }
       }},
  });
  return seat;
}

EgressPlan plan_egress(const std::vector<std::string>& asked, const std::vector<std::string>& row_rules,
                       const std::string& row_name, const EgressSeat& seat, const std::string& seat_source) {
  EgressPlan plan;
  if (asked.empty()) return plan;
  plan.enabled = true;
  auto add = [&](const EgressRule& r) {
    if (std::find(plan.rules.begin(), plan.rules.end(), r) == plan.rules.end()) plan.rules.push_back(r);
  };
  for (const auto& spec : asked) {
    if (spec != "default") {
      add(parse_egress_rule(spec, "--egress", false));
      continue;
    }
    if (row_name.empty()) throw Error(ErrorKind::usage, "--egress default: needs --runtime NAME (the row's endpoints)");
    if (row_rules.empty()) throw Error(ErrorKind::usage, "--egress default: runtime '" + row_name + "' names no egress endpoints");
    for (const auto& r : row_rules) add(parse_egress_rule(r, "runtime '" + row_name + "' egress", true));
  }
  for (const auto& r : plan.rules) {
    if (!seat.allow) continue;
    bool covered = std::any_of(seat.allow->begin(), seat.allow->end(), [&](const EgressRule& cap) { return cap.covers(r); });
    if (!covered) {
      std::vector<std::string> caps;
      for (const auto& cap : *seat.allow) caps.push_back(cap.text());
      throw Error(ErrorKind::usage, "--egress: '" + r.text() + "' is beyond this seat's [egress] allow (" + seat_source +
                                        ": " + (caps.empty() ? "nothing" : join(caps, ", ")) + ")");
    }
  }
  plan.hosts = seat.hosts;
  plan.private_ok = seat.private_ok;
  plan.upstream_ca = seat.upstream_ca;
  return plan;
}

}  // namespace asbx
