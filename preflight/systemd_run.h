// The systemd-run command line of the NoNewPrivs re-exec. Pure, so tests pin it exactly.
#pragma once
#include <string>
#include <vector>

namespace asbx {

struct ReexecSpec {
  std::string systemd_run = "/usr/bin/systemd-run";  // preflight/spawn.h kSystemdRun
  std::string unit;                    // transient unit name, without ".service"
  std::string exe;                     // absolute path of the launcher to start again
  std::vector<std::string> args;       // the launcher's own argv[1..], byte-exact
  std::string path;                    // PATH for the re-exec'd launcher
  std::string home;                    // HOME for the re-exec'd launcher
  std::string marker;                  // file the re-exec'd launcher writes when it starts
  std::vector<std::string> pass_env;   // names whose values systemd-run copies (not on the command line)
};

// systemd 252 expands $VAR and ${VAR} in ExecStart= and has no --expand-environment=no:
// every '$' becomes "$$", which it turns back into one '$'.
std::string escape_dollars(const std::string& arg);
// Names of the caller's environment worth carrying: not secret-looking (the container never
// gets those either), not systemd's own bookkeeping, not PATH/HOME (set explicitly) and
// valid for D-Bus (UTF-8 values).
std::vector<std::string> reexec_env_names(const std::vector<std::string>& environ);
// Error(usage) if an argument is not valid UTF-8: D-Bus, which carries ExecStart=, refuses it.
void check_reexec_args(const std::vector<std::string>& args);
std::vector<std::string> systemd_run_argv(const ReexecSpec& spec);
// Transient unit name for a session: asbx-run-<id>, or asbx-run-<pid>-<nonce> without --id.
std::string reexec_unit_name(const std::string& session_id, long pid, const std::string& nonce);

// The environment variable that carries the marker path to the re-exec'd launcher.
inline constexpr const char* kReexecMarkerEnv = "ASBX_REEXEC_MARKER";
inline constexpr const char* kReexecUnitEnv = "ASBX_REEXEC_UNIT";

}  // namespace asbx
