// Where the launcher runs, measured: NoNewPrivs from /proc/self/status, and the decision
// whether to run here or re-exec through `systemd-run --user`. Pure: facts in, decision out.
#pragma once
#include <string>

namespace asbx {

// The NoNewPrivs value (0 or 1) in /proc/<pid>/status text; Error(internal) if the line is
// missing or malformed (a kernel without it is older than 4.10 and unsupported).
int parse_no_new_privs(const std::string& status_text);

struct PreflightFacts {
  bool no_new_privs = false;
  unsigned uid = 0;
  std::string user;             // login name
  bool linger = false;          // /var/lib/systemd/linger/<user> exists
  std::string xdg_runtime_dir;  // as this process sees it ("" when unset)
  bool bus_socket = false;      // /run/user/<uid>/bus is a socket
  bool reexecd = false;         // this process is the launcher a re-exec started
};

enum class PreflightAction { run_here, reexec };

// run_here when NoNewPrivs is 0 or the launcher is root (rootful podman uses no setuid
// helper); reexec when every prerequisite holds. Otherwise throws Error(seat_preflight)
// naming the remedy, or Error(reexec_loop) when a re-exec'd launcher still sees NoNewPrivs=1.
PreflightAction decide_preflight(const PreflightFacts& facts);

// The one runtime dir systemd-run --user can reach the user manager through.
std::string expected_runtime_dir(unsigned uid);
// The remedies, shared with `doctor`.
std::string linger_remedy(const std::string& user);
std::string bus_remedy(const std::string& user);
std::string runtime_dir_remedy(unsigned uid);

}  // namespace asbx
