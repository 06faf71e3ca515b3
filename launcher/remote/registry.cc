#include "base/fdio.h"
#include "launcher/remote/registry.h"

#include <fstream>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/toml_util.h"
#include "base/util.h"

namespace asbx {
namespace {

void require(bool ok, const std::string& at, const std::string& what) {
  if (!ok) throw Error(ErrorKind::config, at + ": " + what);
}

SeatHost parse_host(const toml::table& t, const std::string& path) {
  SeatHost h;
  std::int64_t port = 22;
  for_each_key(t, path, {
      {"name", [&](const toml::node& n) { h.name = get_string(n, path, "name"); }},
      {"address", [&](const toml::node& n) { h.address = get_string(n, path, "address"); }},
      {"port", [&](const toml::node& n) {
         port = get_int(n, path, "port");
         require(port > 0 && port < 65536, where(path, n), "'port' must be 1-65535");
       }},
      {"user", [&](const toml::node& n) { h.user = get_string(n, path, "user"); }},
      {"roles", [&](const toml::node& n) { h.roles = get_strings(n, path, "roles"); }},
      {"host_key", [&](const toml::node& n) { h.host_key = get_string(n, path, "host_key"); }},
      {"known_hosts", [&](const toml::node& n) { h.known_hosts = get_string(n, path, "known_hosts"); }},
      {"identity_file", [&](const toml::node& n) { h.identity_file = get_string(n, path, "identity_file"); }},
      {"capacity", [&](const toml::node& n) {
         h.capacity = get_int(n, path, "capacity");
         require(h.capacity > 0 && h.capacity <= 256, where(path, n), "'capacity' must be 1-256");
       }},
  });
  h.port = static_cast<int>(port);
  return h;
}

void check_host(const SeatHost& h, const std::string& at) {
  for (const auto& [value, key] : {std::pair{h.name, "name"}, {h.address, "address"}, {h.user, "user"}})
    require(!value.empty(), at, std::string("host needs '") + key + "'");
  require(!h.host_key.empty() || !h.known_hosts.empty(), at,
          "host '" + h.name + "' needs 'host_key' or 'known_hosts' (host keys are never accepted unseen)");
}

}  // namespace

bool SeatHost::has_role(const std::string& role) const {
  for (const auto& r : roles)
    if (r == role) return true;
  return false;
}

std::string default_registry_path(const UserFacts& user) {
  return config_base(user) + "/agent-sandbox/registry.toml";
}

Registry parse_registry(const std::string& text, const std::string& path) {
  toml::table doc = parse_toml(text, path);
  Registry reg{path, {}};
  std::set<std::string> names;
  for_each_key(doc, path, {{"host", [&](const toml::node& n) {
    const auto* array = n.as_array();
    require(array && array->is_array_of_tables(), where(path, n), "'host' must be [[host]] tables");
    for (const auto& item : *array) {
      SeatHost h = parse_host(*item.as_table(), path);
      check_host(h, where(path, item));
      require(names.insert(h.name).second, where(path, *item.as_table()->get("name")),
              "duplicate host name '" + h.name + "'");
      reg.hosts.push_back(h);
    }
  }}});
  return reg;
}

Registry load_registry(const std::string& path) {
  std::optional<std::string> text = read_text_file(path);
  if (!text) throw Error(ErrorKind::config, path + ": cannot read the registry");
  return parse_registry(*text, path);
}

std::vector<SeatHost> seat_candidates(const Registry& registry, const std::string& host) {
  std::vector<SeatHost> out;
  for (const auto& h : registry.hosts)
    if (host.empty() ? h.has_role("agent-seat") : h.name == host) out.push_back(h);
  if (out.empty())
    throw Error(ErrorKind::no_seat, host.empty() ? "no host with role 'agent-seat' in " + registry.path
                                                 : "no host named '" + host + "' in " + registry.path);
  return out;
}

}  // namespace asbx
