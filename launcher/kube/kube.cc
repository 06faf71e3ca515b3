#include "launcher/kube/kube.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "plan/network.h"
#include "base/units.h"
#include "launcher/kube/kube_fields.h"
#include "launcher/kube/yaml.h"

namespace asbx {
namespace {

using json = nlohmann::ordered_json;
using namespace kube_fields;

constexpr const char* kMountOptionsKey = "agent-sandbox/mount-options";

// Labels the Pod does not carry: a Pod has no launcher process, and its lifecycle belongs to
// the kubelet (`gc` ignores containers without them, so a played Pod is never taken for an orphan);
// nor a seat's runtime dir and config file, which name the seat's gc.
bool launcher_only_label(const std::string& key) {
  return key == "agent-sandbox.launcher-pid" || key == "agent-sandbox.boot-id" || key == "agent-sandbox.runtime-dir" ||
         key == "agent-sandbox.seat-config";
}

std::string pod_name(const LaunchPlan& plan) { return checked_name("asbx-" + plan.session_id); }

std::int64_t ceil_seconds(std::int64_t ms) { return (ms + 999) / 1000; }

// Mount options an emptyDir or hostPath cannot carry (the kubelet picks its own).
std::string unsaid_mount_options(const Mount& m) {
  std::vector<std::string> opts;
  for (const auto& o : m.options)
    if (o != "rw" && o != "ro" && o != "rbind" && o.rfind("size=", 0) != 0) opts.push_back(o);
  return joined(opts, ",");
}

// Volumes from the plan's mounts: tmpfs → memory-backed emptyDir, bind → hostPath at the same
// source, mounted at the same destination. Names carry the Pod's name: podman's `kube play`
// turns an emptyDir into a volume named after it, shared by every Pod that uses the name.
struct PodVolumes {
  json volumes = json::array();
  json agent_mounts = json::array();
  json home_mounts = json::array();  // the emptyDirs the credential copies land in
  std::vector<std::string> host_path_volumes;  // names without the Pod's prefix
  std::vector<std::pair<std::string, std::string>> unsaid_options;  // name suffix → mount options
};

void add_empty_dir(const LaunchPlan& plan, const Mount& m, json& mount, PodVolumes& v) {
  json dir = {{"medium", "Memory"}};
  if (auto size = option_value(m, "size"); !size.empty())
    dir["sizeLimit"] = memory_quantity(parse_size(size, "tmpfs size of " + m.destination));
  v.volumes.push_back({{"name", mount["name"]}, {"emptyDir", dir}});
  for (const auto& c : plan.credentials)
    if (c.copy_to.rfind(m.destination + "/", 0) == 0) {
      v.home_mounts.push_back(mount);
      return;
    }
}

void add_host_path(const Mount& m, const std::string& suffix, json& mount, PodVolumes& v) {
  mount["readOnly"] = m.read_only();
  v.volumes.push_back({{"name", mount["name"]}, {"hostPath", {{"path", m.source}, {"type", "Directory"}}}});
  v.host_path_volumes.push_back(suffix);
}

PodVolumes pod_volumes(const LaunchPlan& plan, const std::string& pod) {
  PodVolumes v;
  int binds = 0;
  for (const auto& m : plan.mounts) {
    std::string suffix = m.type == "tmpfs" ? basename_of(m.destination) : "bind" + std::to_string(binds++);
    json mount = {{"name", checked_name(pod + "-" + suffix)}, {"mountPath", m.destination}};
    if (m.type == "tmpfs") add_empty_dir(plan, m, mount, v);
    else add_host_path(m, suffix, mount, v);
    if (auto opts = unsaid_mount_options(m); !opts.empty()) v.unsaid_options.emplace_back(suffix, opts);
    v.agent_mounts.push_back(mount);
  }
  return v;
}

std::string secrets_dir(const StagedCredential& c) { return "/sandbox-secrets/" + c.runtime; }

// The init container's whole program: copy each (source, destination) pair, parents 0700, copy
// 0600 — the same contract as the launcher's own stage step. Paths only, never content.
const char* kCopyScript =
    "set -eu\n"
    "while [ $# -gt 0 ]; do\n"
    "  mkdir -p -m 0700 -- \"${2%/*}\"\n"
    "  cp -- \"$1\" \"$2\"\n"
    "  chmod 0600 -- \"$2\"\n"
    "  shift 2\n"
    "done\n";

json credentials_container(const LaunchPlan& plan, const std::string& pod, PodVolumes& v) {
  json command = {"/bin/sh", "-c", kCopyScript, "asbx-credentials"};
  json mounts = v.home_mounts;
  for (const auto& c : plan.credentials) {
    std::string key = basename_of(c.copy_to), volume = checked_name(pod + "-cred-" + c.runtime);
    command.push_back(secrets_dir(c) + "/" + key);
    command.push_back(c.copy_to);
    mounts.push_back({{"name", volume}, {"mountPath", secrets_dir(c)}, {"readOnly", true}});
    v.volumes.push_back({{"name", volume},
                         {"secret",
                          {{"secretName", kube_secret_name(plan, c)},
                           {"items", {{{"key", key}, {"path", key}}}},
                           {"defaultMode", 0440},  // group-readable: fsGroup is the agent's group
                           {"optional", false}}}});
  }
  return {{"name", "credentials"},     {"image", plan.image},       {"imagePullPolicy", "Never"},
          {"command", command},        {"securityContext", container_security(plan)},
          {"resources", resources(plan.limits)}, {"volumeMounts", mounts}};
}

json agent_container(const LaunchPlan& plan, const PodVolumes& v) {
  json env = json::array();
  for (const auto& [name, value] : plan.env) env.push_back({{"name", name}, {"value", value}});
  return {{"name", "agent"},
          {"image", plan.image},
          {"imagePullPolicy", "Never"},  // like the launcher: the seat's own image, never pulled
          {"command", plan.argv},
          {"workingDir", plan.workdir},
          {"env", env},
          {"stdin", true},
          {"stdinOnce", true},
          {"tty", plan.tty},
          {"securityContext", container_security(plan)},
          {"resources", resources(plan.limits)},
          {"volumeMounts", v.agent_mounts}};
}

json pod_labels(const LaunchPlan& plan) {
  json labels = json::object();
  for (const auto& [key, value] : plan.labels) {
    if (launcher_only_label(key)) continue;
    if (!label_value(value))
      throw Error(ErrorKind::usage, "kube: label " + key + "='" + value + "' is not a Kubernetes label value");
    labels[key] = value;
  }
  return labels;
}

// The egress allowlist, or "none". The door (127.0.0.1:PORT in the agent's env) has no Pod form:
// docs/KUBERNETES.md says what must serve it.
std::string egress_annotation(const EgressPlan& e) {
  if (!e.enabled) return "none";
  std::vector<std::string> rules;
  for (const auto& r : e.rules) rules.push_back(r.text());
  std::string list = joined(rules, ",");
  if (list.size() > 63)
    throw Error(ErrorKind::usage, "kube: the egress list '" + list + "' is longer than the 63 characters an annotation "
                                  "may hold (podman 4.3's kube play limit); ask for fewer names");
  return list;
}

// One key per value, each value short: podman 4.3's `kube play` refuses annotation values
// longer than 63 characters (Kubernetes itself allows 256 KiB in all).
json gap_annotations(const LaunchPlan& plan, const PodVolumes& v) {
  const Limits& l = plan.limits;
  json a = {
      {"agent-sandbox/pids-limit", std::to_string(l.pids)},
      {"agent-sandbox/nofile", std::to_string(l.nofile)},
      {"agent-sandbox/nproc", std::to_string(l.nproc)},
      {"agent-sandbox/cpu-shares", std::to_string(l.cpu_shares)},
      {"agent-sandbox/memory-swap", "0"},
      {"agent-sandbox/disk-inodes", std::to_string(l.disk_inodes)},
      {"agent-sandbox/host-paths", joined(v.host_path_volumes, ",")},
      {"agent-sandbox/pod-security", v.host_path_volumes.empty() ? "restricted" : "privileged"},
      {"agent-sandbox/init", "podman-init"},
      {"agent-sandbox/network", plan.network},
      {"agent-sandbox/egress", egress_annotation(plan.egress)},
  };
  for (const auto& [suffix, options] : v.unsaid_options) a[std::string(kMountOptionsKey) + "." + suffix] = options;
  return a;
}

// none → a NetworkPolicy with no rule: no ingress, no egress (DNS included). slirp4netns is
// the Pod network with unfiltered egress. A namespace or container of the seat has no Pod form.
bool needs_deny_all(const LaunchPlan& plan) {
  NetworkMode mode = parse_network(plan.network, "--network");
  if (mode.nsmode == "none") return true;
  if (mode.nsmode == "slirp4netns") return false;
  throw Error(ErrorKind::usage, "kube: --network " + plan.network +
                                    " has no Pod form (a Pod cannot join a network namespace of the seat); use none");
}

json deny_all_policy(const LaunchPlan& plan, const std::string& pod) {
  json selector = {{"agent-sandbox.session", plan.session_id}};
  return {{"apiVersion", "networking.k8s.io/v1"},
          {"kind", "NetworkPolicy"},
          {"metadata", {{"name", pod}, {"labels", selector}}},
          {"spec", {{"podSelector", {{"matchLabels", selector}}}, {"policyTypes", {"Ingress", "Egress"}}}}};
}

json pod_spec(const LaunchPlan& plan, const std::string& pod, PodVolumes v) {
  std::int64_t gid = uid_gid(plan.user).second;
  json spec = {{"restartPolicy", "Never"},
               {"automountServiceAccountToken", false},
               {"enableServiceLinks", false},  // no service variables: the env is the allowlist only
               {"hostname", plan.hostname},
               {"terminationGracePeriodSeconds", ceil_seconds(plan.grace_ms)},
               {"securityContext",
                {{"runAsNonRoot", true}, {"fsGroup", gid}, {"seccompProfile", seccomp_profile(plan)}}}};
  if (plan.timeout_ms > 0) spec["activeDeadlineSeconds"] = ceil_seconds(plan.timeout_ms);
  // gVisor: the cluster's RuntimeClass of that name (GKE Sandbox's; docs/ISOLATION.md).
  if (plan.isolation.wall == "gvisor") spec["runtimeClassName"] = "gvisor";
  if (!plan.credentials.empty()) spec["initContainers"] = json::array({credentials_container(plan, pod, v)});
  spec["containers"] = json::array({agent_container(plan, v)});
  spec["volumes"] = v.volumes;
  return spec;
}

}  // namespace

const std::vector<KubeGap>& kube_gaps() {
  static const std::vector<KubeGap> gaps = {
      {"agent-sandbox/pids-limit", "per-container pids limit"},
      {"agent-sandbox/nofile", "RLIMIT_NOFILE soft = hard"},
      {"agent-sandbox/nproc", "RLIMIT_NPROC soft = hard"},
      {"agent-sandbox/cpu-shares", "cpu shares (a Pod's come from requests.cpu)"},
      {"agent-sandbox/memory-swap", "no swap (memory+swap = memory)"},
      {"agent-sandbox/disk-inodes", "the inodes the session may add (a Pod has no per-Pod inode limit)"},
      {"agent-sandbox/host-paths", "hostPath volumes: directories that must exist on the node at the same paths"},
      {"agent-sandbox/pod-security", "the Pod Security level the namespace must admit"},
      {"agent-sandbox/init", "an init process as PID 1 (signals, zombies)"},
      {"agent-sandbox/network", "the session's network mode"},
      {"agent-sandbox/egress", "the egress allowlist (none, or HOST:PORT,...) the door's proxy must enforce"},
      {"agent-sandbox/mount-options.VOLUME", "mount options beyond read-only (nosuid, nodev, noexec, mode, U), per volume"},
  };
  return gaps;
}

std::string kube_secret_name(const LaunchPlan& plan, const StagedCredential& cred) {
  return checked_name(pod_name(plan) + "-" + cred.runtime);
}

std::vector<json> kube_manifest(const LaunchPlan& plan) {
  // A gitdir's root is a tmpfs the launcher fills before the agent and reads back after it (and
  // sweeps); a Pod has no launcher around it, and binding the root read-write instead would let the
  // agent plant what the host's next git runs (docs/MOUNTS.md).
  if (plan.git.shape == "plain" || plan.git.shape == "linked_worktree")
    throw Error(ErrorKind::git_unmountable,
                "kube: workspace '" + plan.git.workspace.path + "' holds a repository (" +
                    (plan.git.shape == "plain" ? "a plain clone" : "a linked worktree") +
                    "): its gitdir's root becomes a tmpfs the launcher fills before the agent and copies back and "
                    "sweeps after it, which a Pod cannot do; run it with the launcher, or give a workspace without "
                    "a repository");
  std::string pod = pod_name(plan);
  bool deny_all = needs_deny_all(plan);
  PodVolumes v = pod_volumes(plan, pod);
  json metadata = {{"name", pod}, {"labels", pod_labels(plan)}, {"annotations", gap_annotations(plan, v)}};
  std::vector<json> docs = {{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", pod_spec(plan, pod, v)}}};
  if (deny_all) docs.push_back(deny_all_policy(plan, pod));
  return docs;
}

std::string kube_yaml(const LaunchPlan& plan) { return yaml_stream(kube_manifest(plan)); }

}  // namespace asbx
