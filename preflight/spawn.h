// The one place the launcher library starts a program, and only these three: systemd-run for the
// NoNewPrivs re-exec, systemctl --user (forwarding a signal to that unit, starting
// podman.socket), and the host's git for `agent-sandbox git` (launcher/gitguard/safe_git.cc),
// which replaces the launcher. Never an agent, never a PATH lookup: anything else throws
// Error(internal).
#pragma once
#include <csignal>
#include <string>
#include <vector>

namespace asbx {

inline constexpr const char* kSystemdRun = "/usr/bin/systemd-run";
inline constexpr const char* kSystemctl = "/usr/bin/systemctl";
inline constexpr const char* kHostGit = "/usr/bin/git";

// Forks and runs argv (argv[0] must be kSystemdRun or kSystemctl) with `child_mask` as its
// signal mask; `own_group` puts it in a new process group, `quiet` sends its stdout and stderr
// to /dev/null. Returns its pid.
pid_t spawn_helper(const std::vector<std::string>& argv, const sigset_t& child_mask, bool own_group, bool quiet);
// Replaces this process with kHostGit and `argv` (argv[0] must be kHostGit), in the current
// environment. Returns only when execv failed (errno says why).
void exec_host_git(const std::vector<std::string>& argv);
// A waitpid status as a shell would report it: the exit code, or 128 + the signal.
int wait_status_code(int status);

}  // namespace asbx
