// Which wall a session gets (docs/ISOLATION.md): runc (namespaces and a seccomp filter on the
// seat's own kernel) or gVisor's runsc (a second kernel, the sentry, in between). The OCI runtimes
// are rows of a table; so are the guarantees of a runc session, each with how it holds under
// runsc or why such a session is refused (isolation_unavailable) before anything is created.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "base/plan.h"
#include "base/request.h"
#include "base/seat_config.h"

namespace asbx {

struct OciRuntimeRow {
  std::string name;                 // seat config `runtime`
  std::string wall;                 // what --isolation, the record, the ledger and ps call it
  std::string binary;               // the runtime's own executable ("" = podman's default)
  std::vector<std::string> flags;   // what the wrapper adds (podman 4.3's runtime flags are global)
  std::string kube_runtime_class;   // the Pod's runtimeClassName ("" = none)
  std::string user_namespace;       // a rootful seat's default (docs/DECISIONS.md, issue 34)
};
const std::vector<OciRuntimeRow>& oci_runtime_table();
const OciRuntimeRow& oci_runtime_row(const std::string& name);  // throws config for an unknown name
// A rootful session's user namespace under `wall`: the seat's user_namespace, else the wall's row's.
std::string seat_user_namespace(const SeatConfig& seat, const std::string& wall);

struct GuaranteeRow {
  std::string guarantee;
  std::string under_runsc;  // how it holds, or why the session is refused
};
const std::vector<GuaranteeRow>& guarantee_table();

// The compat shim of a gVisor session (plan_isolation binds both in read-only from runsc_dir; the
// list is /etc/ld.so.preload inside and names the shim's path there).
inline constexpr const char* kGvisorShim = "gvisor-compat.so";
inline constexpr const char* kGvisorPreloadList = "gvisor-ld.so.preload";
inline constexpr const char* kGvisorShimInContainer = "/usr/lib/agent-sandbox/gvisor-compat.so";

// The podman service of gVisor sessions: seat runsc_socket, else SOCKET's dir/podman-runsc.sock.
std::string runsc_socket(const SeatConfig& seat);
// The wrapper podman runs for runsc on `platform`: DIR/runsc-PLATFORM.
std::string runsc_wrapper(const SeatConfig& seat);

// Decides plan.isolation from --isolation and the seat; under gVisor rewrites the tmpfs mounts the
// launcher reaches into as seat tmpfs binds. Throws isolation_unavailable naming what cannot hold
// (a weaker wall than the seat requires, runsc or its wrapper missing, a guarantee) and usage for
// an unknown --isolation. `executable` is the file check, (path, execute or read) (tests replace it).
void plan_isolation(const Request& req, const SeatConfig& seat, LaunchPlan& plan,
                    const std::function<bool(const std::string&, FileNeed need)>& executable);

// Each tmpfs of the plan the launcher writes into or reads back (all but /tmp) becomes a tmpfs on
// the seat (plan.isolation.seat_tmpfs, in SESSION_DIR/tmpfs/) bound in; a "U" one is owned by
// uid:gid (the agent's ids as the seat's kernel sees them). gVisor: the sandbox's own tmpfs is out
// of the seat's reach; a user namespace: host root cannot write into a tmpfs mounted inside it.
void move_tmpfs_to_seat(LaunchPlan& plan, unsigned uid, unsigned gid);

// Which of the plan's guarantees cannot hold under gVisor: "" when all hold, else the guarantee's
// name and why (pure).
std::string gvisor_refusal(const LaunchPlan& plan);

// The sandbox as its boot described itself in the sentry's log, before the agent ran (the platform
// and network runsc logs as it starts) against the plan: "" when they are the plan's, else what
// differs (pure). A podman 4.3 service runs the runtime its containers.conf names, whatever the
// create body asks: a kvm seat's service left on the ptrace wrapper would run it on ptrace.
std::string gvisor_boot_mismatch(const LaunchPlan& plan, const std::string& platform, const std::string& network);

}  // namespace asbx
