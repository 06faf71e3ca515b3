#include "base/fdio.h"
#include "plan/config.h"

#include <algorithm>
#include <fstream>
#include <pwd.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "egress/policy.h"
#include "plan/network.h"
#include "base/toml_util.h"
#include "base/units.h"
#include "base/util.h"
#include "tripwire/canaries.h"

namespace asbx {
namespace {

// A member holds a user namespace range, an init process and a few small mounts while it waits.
const std::int64_t kMaxPoolSize = 32;

SeatConfig defaults_for(const UserFacts& user) {
  SeatConfig c;
  std::string run = !user.xdg_runtime_dir.empty() ? user.xdg_runtime_dir
                    : user.uid == 0               ? "/run"
                                                  : "/run/user/" + std::to_string(user.uid);
  c.socket = run + "/podman/podman.sock";
  c.runtime_dir = (user.uid == 0 ? "/run" : run) + "/agent-sandbox/sessions";
  c.workspace_root = user.home + "/sandbox/workspaces";
  c.workspace_roots = {c.workspace_root};
  // root's agent runs as 1000 and cannot pass the image's 0700 /root: its mirrors live elsewhere.
  c.git_roots = {user.uid == 0 ? "/srv/agent-sandbox/git-common" : user.home + "/cdx-offload/git-common"};
  std::string state = !user.xdg_state_home.empty() ? user.xdg_state_home : user.home + "/.local/state";
  c.ledger = state + "/agent-sandbox/ledger.jsonl";
  return c;
}

std::string config_size(const toml::node& n, const std::string& path, const char* key) {
  std::string text = get_string(n, path, key);
  try { parse_size(text, key); }
  catch (const Error& e) { throw Error(ErrorKind::config, where(path, n) + ": " + e.what()); }
  return text;
}

std::int64_t config_count(const toml::node& n, const std::string& path, const char* key) {
  std::int64_t v = get_int(n, path, key);
  if (v < 1) throw Error(ErrorKind::config, where(path, n) + ": '" + key + "' must be at least 1");
  return v;
}

int pool_count(const toml::node& n, const std::string& path, const char* key) {
  std::int64_t v = get_int(n, path, key);
  if (v < 0 || v > kMaxPoolSize)
    throw Error(ErrorKind::config, where(path, n) + ": '" + key + "' must be between 0 and " + std::to_string(kMaxPoolSize));
  return static_cast<int>(v);
}

void apply_limits(const toml::node& node, const std::string& path, SeatConfig& c) {
  const auto* table = node.as_table();
  if (!table) throw Error(ErrorKind::config, where(path, node) + ": 'limits' must be a table");
  for_each_key(*table, path, {
      {"memory", [&](const toml::node& n) {
         c.memory = get_string(n, path, "memory");
         try { parse_size(c.memory, "memory"); }
         catch (const Error& e) { throw Error(ErrorKind::config, where(path, n) + ": " + e.what()); }
       }},
      {"pids", [&](const toml::node& n) { c.pids = get_int(n, path, "pids"); }},
      {"cpus", [&](const toml::node& n) { c.cpus = get_number(n, path, "cpus"); }},
      {"cpu_shares", [&](const toml::node& n) { c.cpu_shares = get_int(n, path, "cpu_shares"); }},
      {"disk", [&](const toml::node& n) { c.disk = config_size(n, path, "disk"); }},
      {"disk_inodes", [&](const toml::node& n) { c.disk_inodes = config_count(n, path, "disk_inodes"); }},
      {"disk_floor", [&](const toml::node& n) { c.disk_floor = config_size(n, path, "disk_floor"); }},
      {"disk_floor_inodes", [&](const toml::node& n) { c.disk_floor_inodes = config_count(n, path, "disk_floor_inodes"); }},
  });
}

std::int64_t config_duration_ms(const toml::node& n, const std::string& path, const char* key);

// [git_sweep]: the seat may make the sweep after the agent stricter, never laxer (plan/git_plan.h).
void apply_git_sweep(const toml::node& node, const std::string& path, SeatConfig& c) {
  const auto* table = node.as_table();
  if (!table) throw Error(ErrorKind::config, where(path, node) + ": 'git_sweep' must be a table");
  const GitSweepLimits most;
  auto bounded = [&](const toml::node& n, const char* key, std::int64_t value, std::int64_t max) {
    if (value < 1 || value > max)
      throw Error(ErrorKind::config, where(path, n) + ": '" + key + "' must be between 1 and " + std::to_string(max));
    return value;
  };
  for_each_key(*table, path, {
      {"max_depth", [&](const toml::node& n) {
         c.git_sweep.max_depth = static_cast<int>(bounded(n, "max_depth", get_int(n, path, "max_depth"), most.max_depth));
       }},
      {"max_entries", [&](const toml::node& n) {
         c.git_sweep.max_entries = bounded(n, "max_entries", get_int(n, path, "max_entries"), most.max_entries);
       }},
      {"time", [&](const toml::node& n) { c.git_sweep.ms = bounded(n, "time", config_duration_ms(n, path, "time"), most.ms); }},
  });
}

std::int64_t config_duration_ms(const toml::node& n, const std::string& path, const char* key) {
  try {
    return parse_duration_ms(get_string(n, path, key), key);
  } catch (const Error& e) {
    throw Error(ErrorKind::config, where(path, n) + ": " + e.what());
  }
}

bool credential_expiring_warn(const toml::node& n, const std::string& path) {
  std::string v = get_string(n, path, "credential_expiring");
  if (v != "refuse" && v != "warn")
    throw Error(ErrorKind::config, where(path, n) + ": credential_expiring must be \"refuse\" or \"warn\"");
  return v == "warn";
}

// [state]: where a runtime's state goes by default, and the caps (docs/STATE.md).
void apply_state(const toml::node& node, const std::string& path, const UserFacts& user, SeatConfig& c) {
  const auto* table = node.as_table();
  if (!table) throw Error(ErrorKind::config, where(path, node) + ": 'state' must be a table");
  for_each_key(*table, path, {
      {"dir", [&](const toml::node& n) { c.state_dir = expand_home(get_string(n, path, "dir"), user); }},
      {"max_files", [&](const toml::node& n) {
         c.state_limits.max_files = get_int(n, path, "max_files");
         if (c.state_limits.max_files < 1) throw Error(ErrorKind::config, where(path, n) + ": 'max_files' must be at least 1");
       }},
      {"max_bytes", [&](const toml::node& n) {
         try { c.state_limits.max_bytes = parse_size(get_string(n, path, "max_bytes"), "max_bytes"); }
         catch (const Error& e) { throw Error(ErrorKind::config, where(path, n) + ": " + e.what()); }
       }},
  });
}

std::string one_of(const toml::node& n, const std::string& path, const char* key, const std::vector<std::string>& values) {
  std::string v = get_string(n, path, key);
  if (std::find(values.begin(), values.end(), v) != values.end()) return v;
  throw Error(ErrorKind::config, where(path, n) + ": " + key + " must be \"" + join(values, "\" or \"") + "\"");
}

TripwireMode tripwire_mode(const toml::node& n, const std::string& path) {
  std::string v = get_string(n, path, "tripwire");
  if (v == "record") return TripwireMode::record;
  if (v == "kill") return TripwireMode::kill;
  if (v == "off") return TripwireMode::off;
  throw Error(ErrorKind::config, where(path, n) + ": tripwire must be \"record\", \"kill\" or \"off\"");
}

// HOME-relative paths ("~/" allowed in front), each once.
std::vector<std::string> tripwire_canaries(const toml::node& n, const std::string& path) {
  std::vector<std::string> out;
  for (std::string c : get_strings(n, path, "tripwire_canaries")) {
    if (c.rfind("~/", 0) == 0) c = c.substr(2);
    std::string problem = canary_path_problem(c);
    if (!problem.empty()) throw Error(ErrorKind::config, where(path, n) + ": tripwire_canaries: '" + c + "' " + problem);
    if (std::find(out.begin(), out.end(), c) != out.end())
      throw Error(ErrorKind::config, where(path, n) + ": tripwire_canaries: '" + c + "' is listed twice");
    out.push_back(c);
  }
  return out;
}

}  // namespace

SeatConfig parse_seat_config(const std::string& text, const std::string& path, const UserFacts& user) {
  SeatConfig c = defaults_for(user);
  c.path = path;
  auto str = [&](std::string& field, const char* key) {
    return [&field, key, &path, &user](const toml::node& n) { field = expand_home(get_string(n, path, key), user); };
  };
  toml::table table = parse_toml(text, path);
  bool root_set = false, roots_set = false;
  for_each_key(table, path, {
      {"socket", str(c.socket, "socket")},
      {"image", str(c.image, "image")},
      {"network", [&](const toml::node& n) {
         c.network = get_string(n, path, "network");
         try { parse_network(c.network, "network"); }
         catch (const Error& e) { throw Error(ErrorKind::config, where(path, n) + ": " + e.what()); }
       }},
      {"workspace_root", [&](const toml::node& n) {
         str(c.workspace_root, "workspace_root")(n);
         root_set = true;
       }},
      {"workspace_roots", [&](const toml::node& n) {
         c.workspace_roots.clear();
         for (const auto& root : get_strings(n, path, "workspace_roots")) c.workspace_roots.push_back(expand_home(root, user));
         if (c.workspace_roots.empty()) throw Error(ErrorKind::config, where(path, n) + ": 'workspace_roots' names no root");
         roots_set = true;
       }},
      {"runtime_dir", [&](const toml::node& n) {
         str(c.runtime_dir, "runtime_dir")(n);
         if (c.runtime_dir.empty() || c.runtime_dir[0] != '/')  // gc and every launch find sessions by it from anywhere
           throw Error(ErrorKind::config, where(path, n) + ": runtime_dir '" + c.runtime_dir + "' is not an absolute path");
       }},
      {"ledger", str(c.ledger, "ledger")},
      {"credtable", str(c.credtable, "credtable")},
      {"git_roots", [&](const toml::node& n) {
         c.git_roots.clear();
         for (const auto& root : get_strings(n, path, "git_roots")) c.git_roots.push_back(expand_home(root, user));
       }},
      {"netns_allowed", [&](const toml::node& n) { c.netns_allowed = get_strings(n, path, "netns_allowed"); }},
      {"network_containers", [&](const toml::node& n) { c.network_containers = get_strings(n, path, "network_containers"); }},
      {"waive_unenforced_limits", [&](const toml::node& n) { c.waive_unenforced_limits = get_bool(n, path, "waive_unenforced_limits"); }},
      {"limits", [&](const toml::node& n) { apply_limits(n, path, c); }},
      {"git_sweep", [&](const toml::node& n) { apply_git_sweep(n, path, c); }},
      {"egress", [&](const toml::node& n) { c.egress = parse_egress_seat(n, path); }},
      {"credential_horizon", [&](const toml::node& n) { c.credential_horizon_ms = config_duration_ms(n, path, "credential_horizon"); }},
      {"credential_margin", [&](const toml::node& n) { c.credential_margin_ms = config_duration_ms(n, path, "credential_margin"); }},
      {"credential_expiring", [&](const toml::node& n) { c.credential_expiring_warn = credential_expiring_warn(n, path); }},
      {"state", [&](const toml::node& n) { apply_state(n, path, user, c); }},
      {"tripwire", [&](const toml::node& n) { c.tripwire.mode = tripwire_mode(n, path); }},
      {"runtime", [&](const toml::node& n) { c.oci_runtime = one_of(n, path, "runtime", {"runc", "runsc"}); }},
      {"runsc_platform", [&](const toml::node& n) { c.runsc_platform = one_of(n, path, "runsc_platform", {"ptrace", "kvm"}); }},
      {"user_namespace", [&](const toml::node& n) { c.user_namespace = one_of(n, path, "user_namespace", {"host", "range"}); }},
      {"pool_size", [&](const toml::node& n) { c.pool_size = pool_count(n, path, "pool_size"); }},
      {"pool_tty_size", [&](const toml::node& n) { c.pool_tty_size = pool_count(n, path, "pool_tty_size"); }},
      {"runsc_dir", str(c.runsc_dir, "runsc_dir")},
      {"runsc_socket", str(c.runsc_socket, "runsc_socket")},
      {"tripwire_canaries", [&](const toml::node& n) { c.tripwire.canaries = tripwire_canaries(n, path); }},
  });
  if (!roots_set) c.workspace_roots.clear();  // the default root counts only when no list is given
  bool listed = std::find(c.workspace_roots.begin(), c.workspace_roots.end(), c.workspace_root) != c.workspace_roots.end();
  if ((root_set || !roots_set) && !listed) c.workspace_roots.push_back(c.workspace_root);
  return c;
}

SeatConfig load_seat_config(const std::string& path, const UserFacts& user) {
  std::optional<std::string> text = read_text_file(path);
  if (!text) {
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0)
      throw Error(ErrorKind::config, path + ": cannot be read");
    return defaults_for(user);  // no file: the embedded local seat
  }
  return parse_seat_config(*text, path, user);
}

}  // namespace asbx
