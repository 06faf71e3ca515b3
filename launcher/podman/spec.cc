#include "launcher/podman/spec.h"

#include <cmath>

#include "credtable/credential.h"
#include "plan/network.h"
#include "base/units.h"
#include "seccomp/masked_paths.h"

namespace asbx {
namespace {

using nlohmann::json;

// A bind the launcher idmaps (user_namespace = "range") is handed over as its staged clone.
json mounts_json(const std::vector<Mount>& mounts, const std::vector<Mount>& idmapped) {
  json out = json::array();
  for (const auto& m : mounts) {
    std::string source = m.source;
    for (const auto& i : idmapped)
      if (m.type == "bind" && i.source == m.source) source = i.destination;
    out.push_back({{"type", m.type}, {"source", source}, {"destination", m.destination}, {"options", m.options}});
  }
  return out;
}

json resources_json(const Limits& l) {
  constexpr std::int64_t period = 100000;
  return {
      {"memory", {{"limit", l.memory_bytes}, {"swap", l.memory_bytes}}},  // swap == limit: no swap
      {"cpu", {{"quota", std::llround(l.cpus * period)}, {"period", period}, {"shares", l.cpu_shares}}},
      {"pids", {{"limit", l.pids}}},
  };
}

json resources_json(const LaunchPlan& plan) {
  json r = resources_json(plan.limits);
  if (plan.isolation.sandbox_pids > 0) r["pids"]["limit"] = plan.isolation.sandbox_pids;
  return r;
}

json rlimits_json(const Limits& l) {
  return json::array({{{"type", "nofile"}, {"soft", l.nofile}, {"hard", l.nofile}},
                      {{"type", "nproc"}, {"soft", l.nproc}, {"hard", l.nproc}}});
}

json id_map_json(const std::vector<IdMap>& map) {
  json out = json::array();
  for (const auto& m : map) out.push_back({{"container_id", m.container}, {"host_id", m.host}, {"size", m.size}});
  return out;
}

json env_json(const LaunchPlan& plan) {
  json env = json::object();
  for (const auto& [name, value] : plan.env) env[name] = value;
  for (const auto& [name, value] : plan.tripwire.env) env[name] = value;
  return env;
}

// Not in the create body: the hosts whose TLS the wall terminates (no secret: rules only).
json inject_json(const EgressPlan& e) {
  json out = json::array();
  for (const auto& h : e.inject)
    out.push_back({{"host", h.host}, {"runtime", h.runtime}, {"refresh", h.refresh}, {"allow", h.allow},
                   {"deny", h.deny}, {"token_path", h.token_path}});
  return out;
}

json egress_plan_json(const EgressPlan& e) {
  if (!e.enabled) return nullptr;
  json rules = json::array(), private_ok = json::array();
  for (const auto& r : e.rules) rules.push_back(r.text());
  for (const auto& c : e.private_ok) private_ok.push_back(c.text());
  return {{"door", "127.0.0.1:" + std::to_string(e.port)}, {"allow", rules},   {"hosts", e.hosts},
          {"private_ok", private_ok}, {"idle_ms", e.idle_ms}, {"total_ms", e.total_ms},
          {"max_connections", e.max_connections}, {"inject", inject_json(e)}};
}

// Not in the create body: the launcher reads the state back itself (docs/STATE.md).
json state_plan_json(const StatePlan& s) {
  if (s.dir.empty()) return nullptr;
  return {{"dir", s.dir}, {"paths", s.paths}, {"max_files", s.limits.max_files}, {"max_bytes", s.limits.max_bytes},
          {"export_area", s.export_area}};
}

// Not in the create body but its sysctl and env: the launcher arms it before start.
json tripwire_plan_json(const TripwirePlan& t) {
  return {{"mode", tripwire_mode_name(t.mode)}, {"network", t.network}, {"canaries", t.canaries},
          {"listed_dirs", t.listed_dirs}};
}

// The profile by name and digest (its path is in the create body; its text is long).
json seccomp_plan_json(const SeccompPlan& s) {
  if (s.path.empty()) return nullptr;
  return {{"profile", s.path}, {"digest", "sha256:" + s.digest}, {"base", s.base_path}, {"base_digest", "sha256:" + s.base_digest},
          {"listener", s.listener.empty() ? json(nullptr) : json(s.listener)}, {"sentry_log", s.sentry_log}};
}

// Not in the create body: what the launcher copies, sweeps and scans around the agent (docs/MOUNTS.md).
json isolation_json(const Isolation& i) {
  json seat_tmpfs = json::array();
  for (const auto& m : i.seat_tmpfs) seat_tmpfs.push_back({{"source", m.source}, {"destination", m.destination}, {"options", m.options}});
  json idmapped = json::array();
  for (const auto& m : i.idmapped_binds) idmapped.push_back({{"source", m.source}, {"staged_at", m.destination}});
  return {{"wall", i.wall}, {"oci_runtime", i.oci_runtime.empty() ? json(nullptr) : json(i.oci_runtime)},
          {"platform", i.platform.empty() ? json(nullptr) : json(i.platform)},
          {"required_by", i.required_by.empty() ? json(nullptr) : json(i.required_by)}, {"seat_tmpfs", seat_tmpfs},
          {"sandbox_pids", i.sandbox_pids > 0 ? json(i.sandbox_pids) : json(nullptr)},
          {"user_namespace", i.user_namespace}, {"idmapped_binds", idmapped}};
}

json git_plan_json(const GitPlan& g) {
  if (g.shape.empty()) return nullptr;
  json swept = json::array();
  for (const auto& d : g.writable) swept.push_back(d.path);
  return {{"shape", g.shape},   {"workspace", g.workspace.path}, {"gitdir", g.gitdir.path.empty() ? json(nullptr) : json(g.gitdir.path)},
          {"copied", g.copied}, {"swept", swept}};
}

}  // namespace

json create_body(const LaunchPlan& plan) {
  json body = {
      {"name", plan.container_name},
      {"image", plan.image},
      {"command", plan.argv},
      {"env", env_json(plan)},
      {"work_dir", plan.workdir},
      {"hostname", plan.hostname},
      {"cap_drop", {"ALL"}},
      {"no_new_privileges", true},
      {"read_only_filesystem", true},
      {"init", true},
      {"terminal", plan.tty},
      {"stdin", true},
      {"labels", plan.labels},
      {"netns", netns_json(parse_network(plan.network, "--network"))},
      // A private IPC namespace without podman's /dev/shm (a mount on the seat it tears down after the
      // session, holding a lock its list waits on): the plan's tmpfs there goes with the container's processes.
      {"ipcns", {{"nsmode", "none"}}},
      {"httpproxy", false},  // podman would copy its own proxy variables in: the plan's env is all
      {"r_limits", rlimits_json(plan.limits)},
      {"resource_limits", resources_json(plan)},
      {"mounts", mounts_json(plan.mounts, plan.isolation.idmapped_binds)},
      // No copy of the agent's output in podman's storage (k8s-file would write userdata/ctr.log,
      // as large as all the agent prints): the launcher's attach is the only reader.
      {"log_configuration", {{"driver", "none"}}},
      // The container is removed when the session ends: its writable layer need not be synced
      // to disk (overlay "volatile"; the podman CLI sets it for --rm). docs/BENCHMARKS.md.
      {"volatile", true},
      // conmon stays in the service's cgroup instead of one made for it per container; the
      // container's own cgroup, and so every limit, is unchanged (the limits check still reads it).
      {"cgroups_mode", "no-conmon"},
  };
  // Rootless: keep-id maps the caller onto itself, and the agent runs as the caller, so
  // files it writes in the workspace belong to the caller (not to a subordinate uid).
  if (plan.rootless) body["userns"] = {{"nsmode", "keep-id"}};
  // Rootful: a private user namespace; the agent's ids are the host's, all others a range that
  // owns nothing on the host (plan/userns.h). podman 4.3 refuses keep-id for root.
  if (!plan.uid_map.empty()) {
    body["userns"] = {{"nsmode", "private"}};
    body["idmappings"] = {{"UIDMap", id_map_json(plan.uid_map)}, {"GIDMap", id_map_json(plan.gid_map)}};
  }
  // The agent's own gid may open ICMP echo sockets, so a ping reaches the tripwire (nothing else
  // can be sent that way; without this the kernel refuses the socket and nobody sees the try).
  if (!plan.tripwire.ping_group_range.empty())
    body["sysctl"] = {{"net.ipv4.ping_group_range", plan.tripwire.ping_group_range}};
  // Host-wide kernel facts, masked beyond podman's own list (seccomp/masked_paths.h).
  body["mask"] = json::array();
  for (const auto& m : kernel_paths_masked()) body["mask"].push_back(m.path);
  if (plan.isolation.mask_sys) body["mask"].push_back("/sys");  // the seat's own, bound in (plan/userns.h)
  // The project's profile (seccomp/table.h), written by the launcher before create.
  if (!plan.seccomp.path.empty()) body["seccomp_profile_path"] = plan.seccomp.path;
  // gVisor: the runtime podman runs for this container only (the wrapper adds runsc's flags).
  if (!plan.isolation.oci_runtime.empty()) body["oci_runtime"] = plan.isolation.oci_runtime;
  body["user"] = plan.user;
  return body;
}

json plan_json(const LaunchPlan& plan) {
  json env_names = json::array();
  for (const auto& kv : plan.env) env_names.push_back(kv.first);
  json seed_names = json::array();
  for (const auto& kv : plan.home_seed) seed_names.push_back(kv.first);
  json creds = json::array();
  for (const auto& c : plan.credentials)
    creds.push_back({{"runtime", c.runtime}, {"source", c.source}, {"copy_to", c.copy_to}});
  return {
      {"session_id", plan.session_id},
      {"socket", plan.socket},
      {"rootless", plan.rootless},
      {"runtime", plan.runtime},
      {"inner_sandbox", plan.inner_sandbox},
      {"limits",
       {{"memory", format_size(plan.limits.memory_bytes)},
        {"pids", plan.limits.pids},
        {"cpus", plan.limits.cpus},
        {"cpu_shares", plan.limits.cpu_shares},
        {"nofile", plan.limits.nofile},
        {"nproc", plan.limits.nproc},
        {"disk", format_size(plan.limits.disk_bytes)},
        {"disk_inodes", plan.limits.disk_inodes},
        {"disk_floor", format_size(plan.limits.floor_bytes)},
        {"disk_floor_inodes", plan.limits.floor_inodes}}},
      {"timeout_ms", plan.timeout_ms},
      {"waive_unenforced_limits", plan.waive_unenforced_limits},
      {"waiver_source", plan.waiver_source},
      {"env_names", env_names},
      {"credentials", creds},
      {"session_dir", plan.session_dir},
      {"persist", plan.persist},
      {"attach_socket", plan.attach_socket.empty() ? json(nullptr) : json(plan.attach_socket)},
      {"home_seed", seed_names},
      {"egress", egress_plan_json(plan.egress)},
      {"state", state_plan_json(plan.state)},
      {"tripwire", tripwire_plan_json(plan.tripwire)},
      {"git", git_plan_json(plan.git)},
      {"seccomp", seccomp_plan_json(plan.seccomp)},
      {"isolation", isolation_json(plan.isolation)},
      {"create_body", create_body(plan)},
  };
}

}  // namespace asbx
