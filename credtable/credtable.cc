#include "credtable/credtable.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/stat.h>

#include "egress/policy.h"
#include "base/fdio.h"
#include "base/error.h"
#include "base/toml_util.h"
#include "base/units.h"
#include "base/util.h"
#include "state/rules.h"

namespace asbx {
namespace {

bool is_path_template(const std::string& t) {
  return t.rfind("~/", 0) == 0 || t.rfind("{config}/", 0) == 0 || t.rfind("/", 0) == 0;
}

// Relative, no '..' or '.' components: the copy must stay inside the ephemeral HOME.
bool is_home_relative(const std::string& d) {
  if (d.empty() || d[0] == '/' || d.back() == '/') return false;
  std::stringstream parts(d);
  for (std::string part; std::getline(parts, part, '/');)
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

// A state path never reaches the row's credential copy: what is kept must not carry it back.
void check_state_paths(const CredRow& row, const toml::node& node, const std::string& path) {
  const toml::node* at = node.as_table()->get("state");
  for (const auto& s : row.state) {
    std::string why = is_home_relative_path(s) ? state_credential_conflict(s, row.destination)
                                               : "must be a relative path inside HOME without '.' or '..'";
    if (!why.empty())
      throw Error(ErrorKind::config, where(path, at ? *at : node) + ": runtime '" + row.name + "': state path '" + s +
                                         "' " + why);
  }
}

constexpr std::size_t kMaxSeedBytes = 4096;

// home_seed = { "PATH" = 'TEXT', ... }: a few small constant files, never over the credential copy.
std::vector<std::pair<std::string, std::string>> parse_home_seed(const toml::node& node, const std::string& path,
                                                                 const std::string& destination) {
  const auto* table = node.as_table();
  if (!table) throw Error(ErrorKind::config, where(path, node) + ": 'home_seed' must be a table of path = text");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : *table) {
    std::string file(key.str());
    std::string text = get_string(value, path, "home_seed." + file);
    const toml::node& at = value;  // clang before 16 cannot capture a structured binding
    auto bad = [&](const std::string& why) {
      throw Error(ErrorKind::config, where(path, at) + ": home_seed '" + file + "' " + why);
    };
    if (!is_home_relative(file)) bad("must be a relative path inside HOME without '.' or '..'");
    if (!state_credential_conflict(file, destination).empty()) bad("would touch the credential copy '" + destination + "'");
    if (text.size() > kMaxSeedBytes) bad("is longer than " + std::to_string(kMaxSeedBytes) + " bytes");
    out.emplace_back(file, text);
  }
  return out;
}

// Host names as the wall compares them: normalised, or a config error.
std::vector<std::string> host_names(const toml::node& n, const std::string& path, const char* key) {
  std::vector<std::string> out;
  for (const auto& h : get_strings(n, path, key)) {
    std::string name = normal_host_name(h);
    if (name.empty() || name.find('*') != std::string::npos)
      throw Error(ErrorKind::config, where(path, n) + ": " + key + ": '" + h + "' is not a host name");
    out.push_back(name);
  }
  return out;
}

// "HOST/path": the host one of the row's inject hosts, the path absolute.
void check_path_rules(const CredRow& row, const std::vector<std::string>& rules, const char* key,
                      const std::function<void(const std::string&)>& bad) {
  for (const auto& r : rules) {
    auto slash = r.find('/');
    std::string host = slash == std::string::npos ? "" : r.substr(0, slash);
    if (slash == std::string::npos || std::find(row.inject_hosts.begin(), row.inject_hosts.end(), host) == row.inject_hosts.end())
      bad("runtime '" + row.name + "': " + key + " '" + r + "' must be HOST/PATH with HOST one of inject_hosts");
  }
}

void check_inject(const CredRow& row, const std::function<void(const std::string&)>& bad) {
  if (row.inject_hosts.empty() && (!row.refresh_hosts.empty() || !row.inject_allow.empty() || !row.inject_deny.empty()))
    bad("runtime '" + row.name + "': refresh_hosts, inject_allow and inject_deny need inject_hosts");
  if (!row.inject_hosts.empty() && row.secrets.empty()) bad("runtime '" + row.name + "': inject_hosts needs 'secrets'");
  if (!row.refresh_hosts.empty() && (row.token_path.empty() || row.token_path[0] != '/'))
    bad("runtime '" + row.name + "': refresh_hosts needs 'token_path' (an absolute path)");
  if (!row.refresh_hosts.empty() && row.token_answer != "openai" && row.token_answer != "anthropic")
    bad("runtime '" + row.name + "': 'token_answer' must be \"openai\" or \"anthropic\"");
  check_path_rules(row, row.inject_allow, "inject_allow", bad);
  check_path_rules(row, row.inject_deny, "inject_deny", bad);
  for (const auto& h : row.inject_hosts)
    if (std::find(row.refresh_hosts.begin(), row.refresh_hosts.end(), h) != row.refresh_hosts.end())
      bad("runtime '" + row.name + "': '" + h + "' is both an inject and a refresh host");
}

void check_row(const CredRow& row, const toml::node& node, const std::string& path) {
  auto bad = [&](const std::string& why) { throw Error(ErrorKind::config, where(path, node) + ": " + why); };
  if (row.name.empty()) bad("a runtime row needs a 'name'");
  if (!is_path_template(row.source)) bad("runtime '" + row.name + "': 'source' must start with ~/, {config}/ or /");
  if (!row.account_source.empty() &&
      (!is_path_template(row.account_source) || row.account_source.find("{account}") == std::string::npos))
    bad("runtime '" + row.name + "': 'account_source' must start with ~/, {config}/ or / and contain {account}");
  if (!is_home_relative(row.destination))
    bad("runtime '" + row.name + "': 'destination' must be a relative path inside HOME without '.' or '..'");
  if (!row.inner_sandbox_off.empty() && row.inner_sandbox_why.empty())
    bad("runtime '" + row.name + "': 'inner_sandbox_off' needs 'inner_sandbox_why'");
  check_state_paths(row, node, path);
  check_inject(row, bad);
  const LifetimeRule& l = row.lifetime;
  if (l.expiry_unit != "s" && l.expiry_unit != "ms") bad("runtime '" + row.name + "': 'expiry_unit' must be \"s\" or \"ms\"");
  if (!l.expiry.empty() && l.refresh_command.empty())
    bad("runtime '" + row.name + "': 'expiry' needs 'refresh_command' (the remedy named when it is due)");
  if (l.refresh_stamp.empty() != (l.refresh_age_s == 0))
    bad("runtime '" + row.name + "': 'refresh_stamp' and 'refresh_age' go together");
}

// "5m", "192h" → seconds; a bad value names file:line.
std::int64_t duration_s(const toml::node& n, const std::string& path, const char* key) {
  try {
    return parse_duration_ms(get_string(n, path, key), key) / 1000;
  } catch (const Error& e) {
    throw Error(ErrorKind::config, where(path, n) + ": " + e.what());
  }
}

void lifetime_keys(std::map<std::string, std::function<void(const toml::node&)>>& keys, LifetimeRule& l,
                   const std::string& path) {
  auto str = [&path](std::string& field, const char* key) {
    return [&field, key, &path](const toml::node& n) { field = get_string(n, path, key); };
  };
  keys["expiry"] = str(l.expiry, "expiry");
  keys["expiry_unit"] = str(l.expiry_unit, "expiry_unit");
  keys["auth_kind"] = str(l.oauth_kind, "auth_kind");
  keys["api_key"] = str(l.api_key, "api_key");
  keys["account"] = [&](const toml::node& n) { l.account = get_strings(n, path, "account"); };
  keys["refresh_skew"] = [&](const toml::node& n) { l.refresh_skew_s = duration_s(n, path, "refresh_skew"); };
  keys["refresh_stamp"] = str(l.refresh_stamp, "refresh_stamp");
  keys["refresh_age"] = [&](const toml::node& n) { l.refresh_age_s = duration_s(n, path, "refresh_age"); };
  keys["refresh_command"] = str(l.refresh_command, "refresh_command");
}

CredRow parse_row(const toml::node& node, const std::string& path) {
  const auto* table = node.as_table();
  if (!table) throw Error(ErrorKind::config, where(path, node) + ": each [[runtime]] must be a table");
  CredRow row;
  const toml::node* seed = nullptr;  // read after the row's destination is known
  auto str = [&](std::string& field, const char* key) {
    return [&field, key, &path](const toml::node& n) { field = get_string(n, path, key); };
  };
  std::map<std::string, std::function<void(const toml::node&)>> keys = {
      {"name", str(row.name, "name")},
      {"source", str(row.source, "source")},
      {"account_source", str(row.account_source, "account_source")},
      {"destination", str(row.destination, "destination")},
      {"env", [&](const toml::node& n) { row.env = get_strings(n, path, "env"); }},
      {"required", [&](const toml::node& n) { row.required = get_bool(n, path, "required"); }},
      {"command", str(row.command, "command")},
      {"inner_sandbox_off", [&](const toml::node& n) { row.inner_sandbox_off = get_strings(n, path, "inner_sandbox_off"); }},
      {"inner_sandbox_why", str(row.inner_sandbox_why, "inner_sandbox_why")},
      {"egress", [&](const toml::node& n) {
         row.egress = get_strings(n, path, "egress");
         for (const auto& e : row.egress) parse_egress_rule(e, where(path, n) + ": runtime egress", true);
       }},
      {"state", [&](const toml::node& n) { row.state = get_strings(n, path, "state"); }},
      {"home_seed", [&](const toml::node& n) { seed = &n; }},
      {"secrets", [&](const toml::node& n) { row.secrets = get_strings(n, path, "secrets"); }},
      {"inject_hosts", [&](const toml::node& n) { row.inject_hosts = host_names(n, path, "inject_hosts"); }},
      {"refresh_hosts", [&](const toml::node& n) { row.refresh_hosts = host_names(n, path, "refresh_hosts"); }},
      {"token_path", str(row.token_path, "token_path")},
      {"token_answer", str(row.token_answer, "token_answer")},
      {"inject_allow", [&](const toml::node& n) { row.inject_allow = get_strings(n, path, "inject_allow"); }},
      {"inject_deny", [&](const toml::node& n) { row.inject_deny = get_strings(n, path, "inject_deny"); }},
  };
  lifetime_keys(keys, row.lifetime, path);
  for_each_key(*table, path, keys);
  if (row.command.empty()) row.command = row.name;
  check_row(row, node, path);
  if (seed) row.home_seed = parse_home_seed(*seed, path, row.destination);
  return row;
}

}  // namespace

CredTable parse_credtable(const std::string& text, const std::string& path) {
  CredTable out{path, {}};
  toml::table table = parse_toml(text, path);
  for_each_key(table, path, {{"runtime", [&](const toml::node& n) {
                                const auto* rows = n.as_array();
                                if (!rows) throw Error(ErrorKind::config, where(path, n) + ": 'runtime' must be [[runtime]] rows");
                                for (const auto& item : *rows) out.rows.push_back(parse_row(item, path));
                              }}});
  for (std::size_t i = 0; i < out.rows.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out.rows[i].name == out.rows[j].name)
        throw Error(ErrorKind::config, path + ": runtime '" + out.rows[i].name + "' appears twice");
  return out;
}

std::vector<InjectHost> inject_hosts_of(const CredRow& row) {
  std::vector<InjectHost> out;
  for (const auto& h : row.inject_hosts) {
    InjectHost ih{h, row.name};
    for (const auto& r : row.inject_allow)
      if (r.compare(0, h.size() + 1, h + "/") == 0) ih.allow.push_back(r.substr(h.size()));
    for (const auto& r : row.inject_deny)
      if (r.compare(0, h.size() + 1, h + "/") == 0) ih.deny.push_back(r.substr(h.size()));
    out.push_back(ih);
  }
  for (const auto& h : row.refresh_hosts) {
    InjectHost ih{h, row.name};
    ih.refresh = true;
    ih.token_path = row.token_path;
    ih.token_answer = row.token_answer;
    out.push_back(ih);
  }
  return out;
}

std::string credtable_path(const SeatConfig& seat) {
  return credtable_path(seat, ASBX_CREDTABLE_INSTALLED, std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml");
}

std::string credtable_path(const SeatConfig& seat, const std::string& installed, const std::string& source_tree) {
  if (!seat.credtable.empty()) return seat.credtable;
  struct stat st{};
  if (::stat(installed.c_str(), &st) == 0) return installed;
  return source_tree;
}

CredTable load_credtable(const std::string& path) {
  std::optional<std::string> text = read_text_file(path);
  if (!text) throw Error(ErrorKind::config, path + ": the credential table cannot be read");
  return parse_credtable(*text, path);
}

const CredRow& find_row(const CredTable& table, const std::string& name) {
  std::vector<std::string> known;
  for (const auto& row : table.rows) {
    if (row.name == name) return row;
    known.push_back(row.name);
  }
  throw Error(ErrorKind::usage, "--runtime: unknown runtime '" + name + "' (" + table.path + " has: " + join(known) + ")");
}

std::string expand_template(const std::string& tmpl, const UserFacts& user, const std::string& account) {
  std::string out = tmpl;
  if (out.rfind("~/", 0) == 0) out = user.home + out.substr(1);
  if (out.rfind("{config}/", 0) == 0) out = config_base(user) + out.substr(8);
  for (auto at = out.find("{account}"); at != std::string::npos; at = out.find("{account}", at + account.size()))
    out.replace(at, 9, account);
  return out;
}

}  // namespace asbx
