// What the caller asked for, as parsed from the command line, and the facts of this launch.
// plan/build_plan.h turns them, the seat's config and facts about the user into a LaunchPlan.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/seat_config.h"
#include "base/plan.h"

namespace asbx {

struct Request {
  std::string id;
  // Set by `kube` only (no flag): a Pod has no wall beside it, so credentials stay in copy mode
  // (docs/KUBERNETES.md, the gaps).
  bool pod_manifest = false;
  std::optional<std::string> image;
  std::optional<std::string> workspace;
  std::optional<std::string> git_mirror;  // the common dir of the workspace's linked worktree
  std::optional<std::string> memory;
  std::optional<std::int64_t> pids;
  std::optional<double> cpus;
  std::optional<std::int64_t> cpu_shares;
  std::optional<std::string> disk;           // --disk SIZE: at most the seat's [limits] disk
  std::optional<std::int64_t> disk_inodes;   // --disk-inodes N: at most the seat's
  std::optional<std::string> timeout;
  std::optional<std::string> network;
  std::vector<std::string> egress;  // --egress HOST[:PORT] | http://HOST[:PORT] | default (repeatable)
  std::string isolation;   // --isolation runc|gvisor: "" = the seat's (never weaker than the seat requires)
  std::string runtime;     // credtable row; "" = no credentials
  std::string account;     // credential identity within the row
  std::string credential;  // explicit credential path (overrides the row's template)
  bool tty = false;
  bool persist = false;  // --persist: a supervisor owns the session; terminals attach to it (docs/LIFECYCLE.md)
  bool dry_run = false;
  std::string status_file;
  std::string ledger;
  std::string capture_log;
  std::string capture_log_max = "4g";  // --capture-log-max: the most of the agent's output LOG keeps
  bool capture_stdout = false;  // sandbox-run --capture-stdout: the agent's two streams on stdout (dispatch)
  std::string state_dir;    // --state-dir DIR: the runtime's state goes to DIR/<id>/
  bool state_export = false;  // sandbox-run --state-export: into the seat's export area (dispatch)
  std::int64_t slots = 0;  // sandbox-run --slots N: claim one of N seat slots first (0 = none)
  std::vector<std::string> argv;
};

// What a seat file must allow the launcher (SessionFacts::executable).
enum class FileNeed { execute, read };

// Facts of this launch that are not configuration: when, who, which process.
struct SessionFacts {
  std::int64_t now_unix = 0;
  long pid = 0;
  std::string boot_id;
  std::string cwd;  // where the caller stands: `--workspace .` is its checkout
  std::map<std::string, std::string> environ;  // the launcher's environment (filtered by policy)
  std::string seccomp_default_path;  // the seat's installed podman default profile
  std::string seccomp_default;       // its content as read now ("" when unreadable: planning fails)
  // The user namespace range the launcher claimed for this session (launcher/lifecycle/range_claim.h;
  // 0 before a claim and in a dry run).
  std::int64_t userns_slot = 0;
  // Is this file there and usable as NEED says (execute: runsc, its wrapper; read: the compat shim,
  // which ld.so maps and the package installs 0644)? Unset: access(2). Tests set it.
  std::function<bool(const std::string&, FileNeed need)> executable;
};

// Where podman (containers/common) installs its default seccomp profile; the seat's own copy is
// read at every plan, never a copy kept here.
inline constexpr const char* kPodmanDefaultSeccomp = "/usr/share/containers/seccomp.json";

SessionFacts current_session_facts();
std::string new_session_id(std::int64_t now_unix);
void validate_session_id(const std::string& id);

// A warm pool member's session id starts with this (launcher/pool/fill.cc), and the seat's files
// tell a member's dir by it: a caller's --id never does (launcher/cli.cc).
inline constexpr const char* kMemberIdPrefix = "pool-";

}  // namespace asbx
