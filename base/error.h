// One error type for the whole project. Its kind maps to an exit code in one table
// (error.cc); the agent's own exit code never goes through here.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace asbx {

enum class ErrorKind {
  usage,
  config,
  internal,
  podman_unreachable,
  image_missing,
  create_failed,
  start_failed,
  command_not_found,
  command_not_executable,
  limits_unenforced,
  killed_oom,
  killed_timeout,
  credential_unresolved,
  workspace_rejected,
  git_unmountable,
  seat_preflight,
  systemd_run_failed,
  reexec_loop,
  no_seat,
  host_key_rejected,
  ssh_failed,
  unsafe_refused,
  seat_full,
  credential_expiring,
  egress_unavailable,
  tripwire,
  host_git_unavailable,
  sweep_incomplete,
  attach_refused,
  credential_exposed,
  seccomp_unavailable,
  killed_pids,
  killed_disk,
  disk_floor,
  isolation_unavailable,
};

struct ExitCodeRow {
  ErrorKind kind;
  int code;
  const char* name;
  const char* meaning;
};

const std::vector<ExitCodeRow>& exit_code_table();
const ExitCodeRow& row_of(ErrorKind kind);
int exit_code_of(ErrorKind kind);
const char* name_of(ErrorKind kind);
// Throws Error(usage) for an unknown name.
ErrorKind kind_from_name(const std::string& name);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return exit_code_of(kind_); }

 private:
  ErrorKind kind_;
};

// "outer: inner" context, keeping the inner kind.
[[noreturn]] void rethrow_with_context(const Error& inner, const std::string& outer);

}  // namespace asbx
