// The seat's configuration as a value (read by plan/config.h) and the facts about the user the
// launcher runs as. The waiver for unenforced limits lives in the seat's file and nowhere else:
// no flag or environment variable can set it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/egress_plan.h"
#include "base/git_plan.h"
#include "base/state_plan.h"
#include "base/tripwire_plan.h"

namespace asbx {

struct SeatConfig {
  std::string path;  // file it came from; "" = embedded defaults
  std::string socket;
  std::string image = "localhost/agent-sandbox:latest";
  std::string network = "none";
  std::vector<std::string> netns_allowed;       // ns:PATH values allowed besides /run/netns/NAME
  std::vector<std::string> network_containers;  // container:NAME values allowed (none by default)
  std::string workspace_root;              // default $HOME/sandbox/workspaces
  // Every permitted root (workspace_roots, plus workspace_root when set; the default alone when
  // neither is set). A workspace is a direct child of one of them.
  std::vector<std::string> workspace_roots;
  GitSweepLimits git_sweep;                // [git_sweep]: at most the built-in limits
  std::vector<std::string> git_roots;      // default $HOME/cdx-offload/git-common
  std::string runtime_dir;                 // per-session scratch on the seat
  std::string ledger;                      // default $XDG_STATE_HOME/agent-sandbox/ledger.jsonl
  std::string credtable;                   // default: the table installed with the program
  bool waive_unenforced_limits = false;
  std::string memory = "12g";
  std::int64_t pids = 512;
  double cpus = 4;
  std::int64_t cpu_shares = 256;
  // The disk (docs/RESOURCES.md "Disk"): what one session may add where it can write (bytes and
  // inodes; --disk/--disk-inodes may ask for less, never more), and the floor of free space and
  // free inodes every filesystem a session can write keeps (below it nothing starts: 232).
  std::string disk = "8g";
  std::int64_t disk_inodes = 200000;
  std::string disk_floor = "2g";
  std::int64_t disk_floor_inodes = 50000;
  EgressSeat egress;  // [egress]: the cap, static names, private exceptions (docs/EGRESS.md)
  // Credential lifetime (credtable/lifetime.h): a session without --timeout is assumed to
  // last the horizon; a credential due for refresh before the end + margin is refused
  // ("refuse") or only warned about ("warn", for API-key-only seats). Owner only.
  std::int64_t credential_horizon_ms = 4 * 3600 * 1000;
  std::int64_t credential_margin_ms = 10 * 60 * 1000;
  bool credential_expiring_warn = false;
  std::string state_dir;                   // [state] dir: default --state-dir ("" = no collection)
  StateLimits state_limits;                // [state] max_files, max_bytes
  // The OCI runtime of every session (docs/ISOLATION.md): "runc", or "runsc" (gVisor) which then
  // every session must have (--isolation can ask for gVisor on a runc seat, never for less).
  std::string oci_runtime = "runc";
  std::string runsc_platform = "ptrace";  // "ptrace" or "kvm" (doctor says whether kvm boots here)
  std::string runsc_dir = "/usr/libexec/agent-sandbox";  // where the runsc-PLATFORM wrappers are installed
  // podman 4.3 ignores the create body's oci_runtime (its runtime is per service): gVisor sessions
  // go to a podman service whose containers.conf makes runsc its runtime ("" = SOCKET's dir/podman-runsc.sock).
  std::string runsc_socket;
  // Rootful sessions (docs/DECISIONS.md, issue 34): "range" = a user namespace of their own, every
  // container id in 0x70000000+ (owning nothing on the host) and every bind idmapped by the launcher
  // so workspace writes still land as the owner; "host" = none (the agent's uid is the host's);
  // "" (unset) = the OCI runtime's row (plan/isolation.h: range under runc, host under runsc).
  std::string user_namespace;
  // The warm pool (docs/DECISIONS.md "Issue 37: the warm pool"): members kept created and
  // initialised for sessions that fit (plan/warm_fit.h). 0 = off, the default. A terminal is fixed
  // at create: pool_size members are made without one, pool_tty_size with one (for --tty sessions).
  int pool_size = 0;
  int pool_tty_size = 0;
  TripwireSeat tripwire;                   // tripwire, tripwire_canaries (docs/EGRESS.md, "The tripwire")
};

// Facts about the user the launcher runs as; passed in so policy stays pure.
struct UserFacts {
  unsigned uid = 0;
  unsigned gid = 0;
  std::string name;
  std::string home;
  std::string xdg_config_home;  // "" when unset
  std::string xdg_runtime_dir;  // "" when unset
  std::string xdg_state_home;   // "" when unset
};

UserFacts current_user_facts();
std::string default_seat_config_path(const UserFacts& user);
std::string expand_home(const std::string& path, const UserFacts& user);

}  // namespace asbx
