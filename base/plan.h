// A session is a plain value: everything the mechanism will do, decided up front by
// pure code. `--dry-run` prints it; golden tests pin it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/egress_plan.h"
#include "base/git_plan.h"
#include "base/seccomp_plan.h"
#include "base/state_plan.h"
#include "base/tripwire_plan.h"

namespace asbx {

struct Limits {
  std::int64_t memory_bytes = 0;
  std::int64_t pids = 0;
  double cpus = 0;
  std::int64_t cpu_shares = 0;
  std::int64_t nofile = 8192;   // rlimits are always sent (podman's default cannot be set here)
  std::int64_t nproc = 4096;   // per host uid; pids.max is the real ceiling
  // The disk (launcher/lifecycle/disk_watch.h keeps them: no quota on this kernel): what the
  // session may add in its writable binds, and the seat's floor of free space and inodes.
  std::int64_t disk_bytes = 0;
  std::int64_t disk_inodes = 0;
  std::int64_t floor_bytes = 0;
  std::int64_t floor_inodes = 0;
  std::string disk_source;  // the seat config that set the cap and the floor (for messages)
  bool operator==(const Limits&) const = default;
};

struct Mount {
  std::string type;  // "bind" or "tmpfs"
  std::string source;
  std::string destination;
  std::vector<std::string> options;
  std::uint64_t source_dev = 0;  // identity of the validated source (binds of workspace and git
  std::uint64_t source_ino = 0;  // paths): checked inside the container after init, before start
  bool read_only() const;
  bool operator==(const Mount&) const = default;
};

// Inject mode's tmpfs at kSessionCaDir, where the wall writes the session CA before the start.
Mount session_ca_mount();

// What a credential file says about itself (credtable/lifetime.h): never a token value.
struct CredentialLifetime {
  std::string auth_kind = "unknown";      // "oauth", "chatgpt", "api_key", "unknown"
  std::string account;                    // email or account id from the file; "" = none
  std::optional<std::int64_t> expires_unix;     // the token's own expiry; none = never
  std::optional<std::int64_t> refresh_at_unix;  // when the CLI will refresh it; none = never
  bool refresh_due = false;  // before the session can end (let through by credential_expiring = "warn")
  bool operator==(const CredentialLifetime&) const = default;
};

// A credential travels as a path, never as its content.
struct StagedCredential {
  std::string runtime;      // credtable row
  std::string source;       // absolute path on the seat (resolved, readable)
  std::string copy_to;      // the copy the launcher writes into the ephemeral HOME
  CredentialLifetime lifetime;  // read at plan time from `source`
  std::string mode = "copy";    // "inject": the HOME gets placeholders, the wall the real value
  std::vector<std::string> secrets;  // inject: the row's secret paths in the file
  bool operator==(const StagedCredential&) const = default;
};

// One line of a user namespace's uid_map or gid_map: `size` ids from `container` up are `host` up.
struct IdMap {
  std::int64_t container = 0;
  std::int64_t host = 0;
  std::int64_t size = 0;
  bool operator==(const IdMap&) const = default;
};

// Which wall stands between the agent and the seat's kernel (plan/isolation.h, docs/ISOLATION.md).
struct Isolation {
  std::string wall = "runc";      // "runc": namespaces + seccomp on the seat's kernel; "gvisor": runsc's own kernel
  std::string oci_runtime;        // the runtime podman runs for this container ("" = the service's default, runc)
  std::string platform;           // gvisor: "ptrace" or "kvm"
  std::string required_by;        // who asked: the seat config file, "--isolation gvisor", or "" (the default)
  // gvisor: the tmpfs mounts the launcher writes into or reads back (HOME, the git tmpfs, ...) live
  // inside the sandbox's own kernel, out of the seat's reach; each becomes a tmpfs the launcher
  // mounts on the seat (source: its path there, options: the plan's) and binds in.
  std::vector<Mount> seat_tmpfs;
  // gvisor: the container's pids.max. The sandbox's own tasks and about ten per agent process
  // count there (measured: plan/isolation.cc), so `--pids N` still means about N processes.
  std::int64_t sandbox_pids = 0;
  // user_namespace = "range" (plan/userns.h): each bind of plan.mounts whose source is here is
  // handed to podman as an idmapped clone the launcher mounts at `destination` (a staging path in
  // the session dir) before create and detaches after init. Empty: podman binds the sources.
  std::string user_namespace = "host";
  std::vector<Mount> idmapped_binds;
  // user_namespace = "range" joining a network namespace podman did not make: runc binds the seat's
  // /sys in (it cannot mount the container's own sysfs there), so /sys is masked whole.
  bool mask_sys = false;
  bool operator==(const Isolation&) const = default;
};

struct LaunchPlan {
  std::string session_id;
  std::string container_name;
  std::string image;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // allowlisted, never secret
  std::string workdir;
  std::string user;            // "UID:GID" inside the container
  bool rootless = false;       // rootless service → userns keep-id
  std::vector<IdMap> uid_map;  // rootful: the session's own user namespace (plan/userns.h); rootless: none (keep-id)
  std::vector<IdMap> gid_map;
  Limits limits;
  std::vector<Mount> mounts;
  std::vector<StagedCredential> credentials;
  std::map<std::string, std::string> labels;
  std::string hostname;
  std::string network = "none";
  EgressPlan egress;           // the proxy behind the door, when --egress was given
  bool tty = false;
  bool persist = false;        // a supervisor owns the session; terminals attach (docs/LIFECYCLE.md)
  std::string attach_socket;   // its attach socket: <session_dir>/attach.sock ("" = not persistent)
  std::vector<std::pair<std::string, std::string>> home_seed;  // HOME-relative file → constant text (the row's)
  std::int64_t timeout_ms = 0;  // 0 = none
  std::int64_t grace_ms = 10'000;  // after a forwarded signal, before the kill
  bool waive_unenforced_limits = false;  // only from the seat's config file
  std::string waiver_source;             // the seat config file (which holds or would hold the waiver)
  std::string runtime;                   // credtable row name, "" = none
  std::string inner_sandbox = "n/a";     // how the runtime's own sandbox was turned off
  std::vector<std::string> credential_warnings;  // credential_expiring = "warn" let these through
  std::string socket;                    // podman API socket on the seat
  std::string session_dir;               // seat-side scratch for this session
  StatePlan state;                       // what of HOME is kept, and where (docs/STATE.md)
  TripwirePlan tripwire;                 // the catch-all device and the decoys (docs/EGRESS.md)
  GitPlan git;                           // the workspace's repository: copied, swept, scanned (docs/MOUNTS.md)
  SeccompPlan seccomp;                   // the profile podman applies (seccomp/profile.h)
  Isolation isolation;                   // runc or gVisor (docs/ISOLATION.md)
  bool operator==(const LaunchPlan&) const = default;
};

}  // namespace asbx
