#include "plan/isolation.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"

namespace asbx {
namespace {

// Measured here (ptrace platform, `sleep` children, the record's pids_peak): 80 tasks for the
// sandbox of an idle shell, then 8.3–9.9 per agent process. pids.max under gVisor is the base and
// ten per process asked for, so the agent gets about what it asked for and the seat stays bounded.
constexpr std::int64_t kGvisorBasePids = 96;
constexpr std::int64_t kGvisorPidsPerProcess = 10;

[[noreturn]] void unavailable(const std::string& why) {
  throw Error(ErrorKind::isolation_unavailable, "gVisor (runsc): " + why + "; nothing was created");
}

std::string wall_of(const std::string& isolation) {
  if (isolation == "runc") return "runc";
  if (isolation == "gvisor" || isolation == "runsc") return "gvisor";
  throw Error(ErrorKind::usage, "--isolation: '" + isolation + "' is neither runc nor gvisor");
}

bool has_option(const Mount& m, const std::string& opt) {
  return std::find(m.options.begin(), m.options.end(), opt) != m.options.end();
}

}  // namespace

void move_tmpfs_to_seat(LaunchPlan& plan, unsigned uid, unsigned gid) {
  int n = 0;
  for (auto& m : plan.mounts) {
    if (m.type != "tmpfs" || m.destination == "/tmp" || m.destination == "/dev/shm") continue;  // never the launcher's to fill
    Mount seat{"tmpfs", plan.session_dir + "/tmpfs/" + std::to_string(n++), m.destination, {}};
    std::vector<std::string> bind_opts{"rbind", "rw"};
    for (const auto& o : m.options) {
      if (o == "nosuid" || o == "nodev" || o == "noexec") bind_opts.push_back(o), seat.options.push_back(o);
      else if (o.rfind("size=", 0) == 0 || o.rfind("mode=", 0) == 0) seat.options.push_back(o);
    }
    if (has_option(m, "U")) {
      seat.options.push_back("uid=" + std::to_string(uid));
      seat.options.push_back("gid=" + std::to_string(gid));
    }
    plan.isolation.seat_tmpfs.push_back(seat);
    m = Mount{"bind", seat.source, m.destination, bind_opts};
  }
}

namespace {

// Debian 12's sentry refuses statx/newfstatat with AT_NO_AUTOMOUNT (EINVAL), which coreutils'
// `ls -l` and `stat` always pass, and answers a blocking read of a host socket with EAGAIN: a
// library preloaded through /etc/ld.so.preload works around both (packaging/runsc/gvisor-compat.cc).
// It and the list are bound in read-only from runsc_dir.
void bind_compat_shim(const SeatConfig& seat, LaunchPlan& plan) {
  const std::vector<std::string> ro{"rbind", "ro", "nosuid", "nodev"};
  plan.mounts.push_back(Mount{"bind", seat.runsc_dir + "/" + kGvisorShim, kGvisorShimInContainer, ro});
  plan.mounts.push_back(Mount{"bind", seat.runsc_dir + "/" + kGvisorPreloadList, "/etc/ld.so.preload", ro});
}

}  // namespace

const std::vector<OciRuntimeRow>& oci_runtime_table() {
  static const std::vector<OciRuntimeRow> rows = {
      // Every rootful runc session in a range of its own (plan/userns.h).
      {"runc", "runc", "", {}, "", "range"},
      // network=host: the sentry uses the session's own network namespace (podman's: only lo, the
      // door, the tripwire's device); its own netstack refuses a namespace podman made.
      // oci-seccomp: the create body's seccomp profile is applied inside the sandbox too.
      // host: runsc does not start in a user namespace on this seat; the sentry is the wall.
      {"runsc", "gvisor", "/usr/bin/runsc", {"--network=host", "--oci-seccomp"}, "gvisor", "host"},
  };
  return rows;
}

std::string seat_user_namespace(const SeatConfig& seat, const std::string& wall) {
  if (!seat.user_namespace.empty()) return seat.user_namespace;
  for (const auto& r : oci_runtime_table())
    if (r.wall == wall) return r.user_namespace;
  return "host";
}

const OciRuntimeRow& oci_runtime_row(const std::string& name) {
  for (const auto& r : oci_runtime_table())
    if (r.name == name) return r;
  throw Error(ErrorKind::config, "runtime '" + name + "' is neither runc nor runsc");
}

std::string runsc_socket(const SeatConfig& seat) {
  if (!seat.runsc_socket.empty()) return seat.runsc_socket;
  return seat.socket.substr(0, seat.socket.rfind('/') + 1) + "podman-runsc.sock";
}

std::string runsc_wrapper(const SeatConfig& seat) { return seat.runsc_dir + "/runsc-" + seat.runsc_platform; }

std::string gvisor_refusal(const LaunchPlan& plan) {
  if (plan.rootless)
    return "rootless podman: the sandbox and the seat tmpfs the launcher mounts for HOME need a rootful seat";
  for (const auto& c : plan.credentials)
    if (c.mode == "inject")
      return "the end-of-session secret scan (inject mode): /tmp, /dev/shm and the agent's memory live in the "
             "sandbox's own kernel, out of the scan's reach (copy mode credentials hold)";
  return "";
}

std::string gvisor_boot_mismatch(const LaunchPlan& plan, const std::string& platform, const std::string& network) {
  if (platform.empty() || network.empty()) return "did not say which platform and network its sandbox has (its log names none)";
  if (platform != plan.isolation.platform)
    return "ran the sandbox on the " + platform + " platform, not " + plan.isolation.platform + " (runsc_platform)";
  std::string planned;
  for (const auto& f : oci_runtime_row("runsc").flags)
    if (f.rfind("--network=", 0) == 0) planned = f.substr(10);
  if (network != planned) return "ran the sandbox with network " + network + ", not " + planned;
  return "";
}

void plan_isolation(const Request& req, const SeatConfig& seat, LaunchPlan& plan,
                    const std::function<bool(const std::string&, FileNeed need)>& executable) {
  const OciRuntimeRow& seat_row = oci_runtime_row(seat.oci_runtime);
  std::string source = seat.path.empty() ? "the seat config" : seat.path;
  std::string wall = req.isolation.empty() ? seat_row.wall : wall_of(req.isolation);
  if (seat_row.wall == "gvisor" && wall != "gvisor")
    unavailable("the seat requires it (runtime = \"runsc\" in " + source + "); --isolation " + req.isolation +
                " cannot ask for a weaker wall");
  plan.isolation = Isolation{};
  plan.isolation.wall = wall;
  if (wall == "runc") return;
  const OciRuntimeRow& row = oci_runtime_row("runsc");
  plan.isolation.required_by = seat_row.wall == "gvisor" ? source : "--isolation gvisor";
  plan.isolation.platform = seat.runsc_platform;
  plan.isolation.oci_runtime = runsc_wrapper(seat);
  plan.isolation.sandbox_pids = kGvisorBasePids + kGvisorPidsPerProcess * plan.limits.pids;
  plan.socket = runsc_socket(seat);  // the service whose runtime is runsc (podman 4.3: per service)
  if (req.pod_manifest) return;  // the cluster's RuntimeClass runs it (launcher/kube/): nothing of the seat's
  if (!executable(row.binary, FileNeed::execute)) unavailable("'" + row.binary + "' is not installed (apt-get install runsc)");
  if (!executable(plan.isolation.oci_runtime, FileNeed::execute))
    unavailable("its wrapper '" + plan.isolation.oci_runtime + "' is missing or not executable (runsc_dir in " +
                source + ")");
  std::string refusal = gvisor_refusal(plan);
  if (!refusal.empty()) unavailable("a guarantee cannot hold: " + refusal);
  std::string shim = seat.runsc_dir + "/" + kGvisorShim;
  if (!executable(shim, FileNeed::read))  // a library ld.so maps: readable is enough (the package installs it 0644)
    unavailable("its compat shim '" + shim + "' is missing (runsc_dir in " + source + "): without it `ls -l`, "
                "`stat` and blocking reads of sockets fail inside");
  unsigned uid = 0, gid = 0;
  std::sscanf(plan.user.c_str(), "%u:%u", &uid, &gid);
  move_tmpfs_to_seat(plan, uid, gid);
  bind_compat_shim(seat, plan);
}

}  // namespace asbx
