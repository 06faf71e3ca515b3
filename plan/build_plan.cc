#include "plan/build_plan.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <fstream>
#include <random>
#include <unistd.h>

#include "credtable/credential.h"
#include "credtable/credtable.h"
#include "credtable/env_policy.h"
#include "base/error.h"
#include "plan/isolation.h"
#include "plan/netns_check.h"
#include "plan/userns.h"
#include "egress/policy.h"
#include "plan/network.h"
#include "base/units.h"
#include "base/util.h"
#include "mounts/git.h"
#include "mounts/workspace.h"
#include "state/plan_state.h"
#include "tripwire/canaries.h"
#include "seccomp/profile.h"

extern char** environ;

namespace asbx {
namespace {

// The disk budget: the seat's, or less when asked (never more: the seat's owner sets the cap).
void disk_limits_for(const Request& req, const SeatConfig& seat, Limits& l) {
  std::string source = seat.path.empty() ? "the seat's defaults" : seat.path;
  std::int64_t cap = parse_size(seat.disk, "disk");
  l.disk_bytes = req.disk ? parse_size(*req.disk, "--disk") : cap;
  l.disk_inodes = req.disk_inodes.value_or(seat.disk_inodes);
  if (l.disk_bytes < (1 << 20)) throw Error(ErrorKind::usage, "--disk: at least 1m");
  if (l.disk_bytes > cap)
    throw Error(ErrorKind::usage, "--disk: " + *req.disk + " is above the seat's " + seat.disk + " ([limits] disk in " + source + ")");
  if (l.disk_inodes > seat.disk_inodes)
    throw Error(ErrorKind::usage, "--disk-inodes: " + std::to_string(l.disk_inodes) + " is above the seat's " +
                                      std::to_string(seat.disk_inodes) + " ([limits] disk_inodes in " + source + ")");
  l.floor_bytes = parse_size(seat.disk_floor, "disk_floor");
  l.floor_inodes = seat.disk_floor_inodes;
  l.disk_source = source;
}

Limits limits_for(const Request& req, const SeatConfig& seat) {
  Limits l;
  l.memory_bytes = parse_size(req.memory.value_or(seat.memory), "--memory");
  l.pids = req.pids.value_or(seat.pids);
  l.cpus = req.cpus.value_or(seat.cpus);
  l.cpu_shares = req.cpu_shares.value_or(seat.cpu_shares);
  if (l.memory_bytes < (6 << 20)) throw Error(ErrorKind::usage, "--memory: at least 6m is needed to start a container");
  if (l.pids < 8) throw Error(ErrorKind::usage, "--pids: at least 8 is needed to start a container");
  if (l.pids > 4194304) throw Error(ErrorKind::usage, "--pids: at most 4194304 (the kernel's largest pid count)");
  // Below 1 ms of quota per 100 ms period the kernel refuses the cgroup (podman at create, or at a warm claim's update).
  if (l.cpus < 0.01 || l.cpus > 1024) throw Error(ErrorKind::usage, "--cpus: must be at least 0.01 and at most 1024");
  if (l.cpu_shares < 2 || l.cpu_shares > 262144) throw Error(ErrorKind::usage, "--cpu-shares: must be between 2 and 262144");
  disk_limits_for(req, seat, l);
  return l;
}

std::map<std::string, std::string> session_labels(const LaunchPlan& plan, const UserFacts& user,
                                                  const SessionFacts& facts) {
  return {
      {"agent-sandbox.session", plan.session_id},
      {"agent-sandbox.owner", user.name.empty() ? std::to_string(user.uid) : user.name},
      {"agent-sandbox.started", std::to_string(facts.now_unix)},
      {"agent-sandbox.launcher-pid", std::to_string(facts.pid)},
      {"agent-sandbox.boot-id", facts.boot_id},
      {"agent-sandbox.timeout-ms", std::to_string(plan.timeout_ms)},
  };
}

// Rootful: the caller's own uid, except that root is never the agent: the image's
// agent user (1000) is used instead. Rootless: keep-id maps the caller onto itself.
std::string container_user(const UserFacts& user) {
  if (user.uid == 0) return "1000:1000";
  return std::to_string(user.uid) + ":" + std::to_string(user.gid);
}

void add_system_mounts(LaunchPlan& plan) {
  plan.mounts.push_back({"tmpfs", "tmpfs", "/tmp", {"rw", "size=512m", "nosuid", "nodev", "mode=1777"}});
  // podman's /dev/shm is off (ipc none): this one lives in the container's mount namespace, as /tmp
  // (docs/THREATS.md: an agent's millions of files in podman's stalled the whole service after it).
  plan.mounts.push_back({"tmpfs", "tmpfs", "/dev/shm", {"rw", "size=64m", "nosuid", "nodev", "noexec", "mode=1777"}});
  plan.mounts.push_back({"tmpfs", "tmpfs", "/sandbox/home", {"rw", "size=512m", "nosuid", "nodev", "mode=0700",
                                                             "U"}});
}

// One mount per destination: a path is never mounted twice (one would hide the other).
void check_distinct_destinations(const std::vector<Mount>& mounts) {
  for (std::size_t i = 0; i < mounts.size(); ++i)
    for (std::size_t j = i + 1; j < mounts.size(); ++j)
      if (mounts[i].destination == mounts[j].destination)
        throw Error(ErrorKind::git_unmountable, "'" + mounts[i].destination + "' would be mounted twice");
}

std::string seat_config_hint(const UserFacts& user) { return default_seat_config_path(user); }

// Inject mode (docs/CREDENTIALS.md): the wall terminates TLS for the row's hosts — those the
// session may reach at all — and the CLIs trust the session CA through their own variables.
void plan_injection(const std::optional<CredRow>& row, LaunchPlan& plan) {
  bool inject = row && std::any_of(plan.credentials.begin(), plan.credentials.end(),
                                   [](const StagedCredential& c) { return c.mode == "inject"; });
  if (!inject) return;
  for (auto& h : inject_hosts_of(*row)) {
    bool reachable = std::any_of(plan.egress.rules.begin(), plan.egress.rules.end(),
                                 [&](const EgressRule& r) { return r.matches(h.host, 443, false); });
    if (reachable) plan.egress.inject.push_back(std::move(h));
  }
  if (plan.timeout_ms > 0) plan.egress.leaf_lifetime_s = std::max<std::int64_t>(60, plan.timeout_ms / 1000);  // ≤ the session
  for (const char* name : {"CODEX_CA_CERTIFICATE", "NODE_EXTRA_CA_CERTS"}) plan.env.emplace_back(name, kSessionCaPath);
}

// --egress: the wall is the container's own empty namespace, so the mode must stay `none`; the
// door's address reaches the agent as proxy variables (not secrets).
void plan_session_egress(const Request& req, const SeatConfig& seat, LaunchPlan& plan) {
  if (req.egress.empty()) return;
  if (plan.network != "none")
    throw Error(ErrorKind::usage, "--egress: needs network none (the wall is the container's own empty namespace); "
                                  "the session's network is '" + plan.network + "'");
  std::vector<std::string> row_rules;
  std::optional<CredRow> row;
  if (!req.runtime.empty()) row = find_row(load_credtable(credtable_path(seat)), req.runtime);
  if (row) row_rules = row->egress;
  std::string source = seat.path.empty() ? "the seat config" : seat.path;
  plan.egress = plan_egress(req.egress, row_rules, req.runtime, seat.egress, source);
  plan_injection(row, plan);
  std::string url = "http://127.0.0.1:" + std::to_string(plan.egress.port);
  for (const char* name : {"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"}) plan.env.emplace_back(name, url);
  for (const char* name : {"NO_PROXY", "no_proxy"}) plan.env.emplace_back(name, "localhost,127.0.0.1,::1");
  plan.env.emplace_back("NODE_USE_ENV_PROXY", "1");
}

// `--workspace .` is the caller's checkout (mounts/workspace.h), judged like any other path.
WorkspaceMount plan_requested_workspace(const std::string& given, const std::string& cwd,
                                        const std::vector<std::string>& roots) {
  if (given != ".") return plan_workspace(given, roots);
  try {
    return plan_workspace(current_checkout(cwd, roots), roots);
  } catch (const Error& e) {
    rethrow_with_context(e, "--workspace .");
  }
}

constexpr std::size_t kMaxSocketPath = 107;  // sizeof(sockaddr_un::sun_path) - 1

// --persist: a terminal to come back to, which still ends at its timeout. The attach socket
// lives in the session's own dir and must fit a unix socket address.
void plan_persistence(const Request& req, LaunchPlan& plan) {
  if (!req.persist) return;
  if (!req.tty) throw Error(ErrorKind::usage, "--persist needs --tty: a persistent session is a terminal to come back to");
  if (plan.timeout_ms <= 0)
    throw Error(ErrorKind::usage, "--persist needs --timeout: a persistent session still ends at its timeout (e.g. --timeout 8h)");
  plan.persist = true;
  plan.attach_socket = plan.session_dir + "/attach.sock";
  if (plan.attach_socket.size() > kMaxSocketPath)
    throw Error(ErrorKind::usage, "--persist: the attach socket path '" + plan.attach_socket + "' is " +
                                      std::to_string(plan.attach_socket.size()) + " bytes, more than a unix socket's " +
                                      std::to_string(kMaxSocketPath) + " (a shorter --id or runtime_dir)");
}

// The recorder's socket (docs/DECISIONS.md, issue 34): every runc session (it needs no device, so
// tripwire = "off" keeps it; only "kill" changes what a refusal does). gVisor: the sentry answers
// seccomp itself and has no listener; the recorder reads its log instead (sentry_log).
std::string seccomp_listener(const LaunchPlan& plan) {
  if (plan.isolation.wall != "runc") return "";
  std::string path = plan.session_dir + "/seccomp.sock";
  if (path.size() > kMaxSocketPath)
    throw Error(ErrorKind::seccomp_unavailable, "the seccomp recorder's socket path '" + path + "' is " + std::to_string(path.size()) +
                                                    " bytes, more than a unix socket's " + std::to_string(kMaxSocketPath) +
                                                    " (a shorter --id or runtime_dir); nothing was created");
  return path;
}

// podman's API carries the command and the environment as JSON text: bytes that are not UTF-8
// cannot reach the container the same way on every path, so they are refused before anything.
void check_json_text(const LaunchPlan& plan) {
  for (std::size_t i = 0; i < plan.argv.size(); ++i)
    if (!valid_utf8(plan.argv[i]))
      throw Error(ErrorKind::usage, (i == 0 ? std::string("the command") : "argument " + std::to_string(i) + " of the command") +
                                        " is not valid UTF-8 (podman's API carries it as JSON text): '" + printable(plan.argv[i], 64) + "'");
  for (const auto& [name, value] : plan.env)
    if (!valid_utf8(name) || !valid_utf8(value))
      throw Error(ErrorKind::usage, "the environment variable '" + printable(name, 64) +
                                        "' passed into the session is not valid UTF-8 (podman's API carries it as JSON text)");
}

}  // namespace

LaunchPlan build_plan(const Request& req, const SeatConfig& seat, const UserFacts& user, const SessionFacts& facts) {
  if (req.argv.empty()) throw Error(ErrorKind::usage, "no command given: use agent-sandbox [options] -- COMMAND [ARG...]");
  LaunchPlan plan;
  plan.session_id = req.id.empty() ? new_session_id(facts.now_unix) : req.id;
  validate_session_id(plan.session_id);
  plan.container_name = "asbx-" + plan.session_id;
  plan.image = req.image.value_or(seat.image);
  plan.argv = req.argv;
  plan.rootless = user.uid != 0;
  plan.user = container_user(user);
  // A rootful session's user namespace is a range of its own unless the seat says user_namespace =
  // "host" or its wall's row does (plan_range_userns, after every mount is planned);
  // plan_rootful_userns's map (the agent's host uid kept) does not start on podman 4.3.1's storage
  // (docs/DECISIONS.md, issue 34).
  plan.limits = limits_for(req, seat);
  plan.timeout_ms = req.timeout ? parse_duration_ms(*req.timeout, "--timeout") : 0;
  plan.network = req.network.value_or(seat.network);
  if (req.network) check_network_reach(*req.network, seat, "--network");  // the seat's own value is its policy
  plan.tty = req.tty;
  plan.hostname = "agent-sandbox";
  plan.socket = seat.socket;
  plan.session_dir = seat.runtime_dir + "/" + plan.session_id;
  plan_persistence(req, plan);
  plan.waive_unenforced_limits = seat.waive_unenforced_limits;
  plan.waiver_source = seat.path.empty() ? "the seat config file (" + seat_config_hint(user) + ")" : seat.path;
  plan.env = container_env(facts.environ, {});
  check_json_text(plan);
  plan.workdir = "/sandbox/home";
  add_system_mounts(plan);
  // Inject mode's tmpfs for the session CA. On a seat that keeps a pool it is in every session, and
  // before the workspace's mounts (a seat tmpfs is numbered in the plan's order), so that a member,
  // made before its session is known, carries inject mode too (docs/DECISIONS.md "Inject mode, warm").
  bool keeps_pool = (seat.pool_size > 0 || seat.pool_tty_size > 0) && !req.pod_manifest;
  if (keeps_pool) plan.mounts.push_back(session_ca_mount());
  std::vector<std::string> taken;  // where the container mounts of its own (for a warm member's git roots)
  for (const auto& m : plan.mounts) taken.push_back(m.destination);
  if (req.workspace) {
    // A SeatConfig made in code (not parsed) may name only workspace_root.
    auto roots = seat.workspace_roots.empty() ? std::vector<std::string>{seat.workspace_root} : seat.workspace_roots;
    WorkspaceMount ws = plan_requested_workspace(*req.workspace, facts.cwd, roots);
    plan.mounts.push_back(ws.mount);
    plan.workdir = ws.container_path;
    GitMounts git = plan_git(ws, req.git_mirror.value_or(""), seat.git_roots);
    plan.mounts.insert(plan.mounts.end(), git.mounts.begin(), git.mounts.end());
    plan.git = std::move(git.git);
    plan.git.sweep = seat.git_sweep;
  } else if (req.git_mirror) {
    throw Error(ErrorKind::usage, "--git-mirror needs --workspace (the linked worktree whose mirror it is)");
  }
  if (seat.pool_size > 0 || seat.pool_tty_size > 0) plan.git.member_roots = member_git_roots(seat.git_roots, taken);
  check_distinct_destinations(plan.mounts);
  plan_runtime(req, seat, user, facts, plan);  // a runtime's row replaces the env: the marker comes after
  // The launcher's session marker, in every container: agent-sandbox-unsafe refuses to run where it is set.
  plan.env.emplace_back("AGENT_SANDBOX_SESSION", plan.session_id);
  plan_session_egress(req, seat, plan);
  if (!plan.egress.inject.empty() && !keeps_pool) plan.mounts.push_back(session_ca_mount());
  plan_state(req, seat, plan);
  plan.tripwire = plan_tripwire(seat.tripwire, plan, seat.path.empty() ? "the seat config (" + seat_config_hint(user) + ")" : seat.path);
  // The seat's installed podman default, tightened (seccomp/table.h). Facts made in code (unit
  // tests) name no default: no profile then, and the session refuses to create (session.cc).
  plan_isolation(req, seat, plan, facts.executable ? facts.executable : [](const std::string& p, FileNeed need) {
    return ::access(p.c_str(), need == FileNeed::execute ? X_OK : R_OK) == 0;
  });
  if (plan.rootless) plan.isolation.user_namespace = "keep-id";
  else if (seat_user_namespace(seat, plan.isolation.wall) == "range" && !req.pod_manifest)
    plan_range_userns(plan, seat.path.empty() ? "the seat config" : seat.path, facts.userns_slot);
  if (!facts.seccomp_default_path.empty())
    plan.seccomp = plan_seccomp(facts.seccomp_default_path, facts.seccomp_default, seat.runtime_dir, plan.session_id,
                                plan.isolation.wall, seccomp_listener(plan));
  if (!plan.seccomp.path.empty()) plan.seccomp.sentry_log = plan.isolation.wall == "gvisor";
  plan.labels = session_labels(plan, user, facts);
  if (plan.persist) plan.labels["agent-sandbox.persist"] = "1";
  if (plan.isolation.wall != "runc") plan.labels["agent-sandbox.isolation"] = plan.isolation.wall;
  // Whose gc judges it: seat configs sharing one service each judge their own (launcher/podman/gc.h).
  if (!seat.runtime_dir.empty()) plan.labels["agent-sandbox.runtime-dir"] = seat.runtime_dir;
  // ... as long as that config is there: a deleted seat's orphans are any seat's gc's.
  if (!seat.path.empty() && seat.path[0] == '/') plan.labels["agent-sandbox.seat-config"] = seat.path;
  return plan;
}

}  // namespace asbx
