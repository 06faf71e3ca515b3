#include "base/error.h"

namespace asbx {

// The one table. Launcher codes are taken from the block 200-239 reserved for them
// (docs/EXIT-CODES.md; test_errors.cc keeps every row inside it, not every code of it is
// used): clear of 0-2, of 126/127 and of 128+N for the signals (N <= 64), so an agent's
// own code is rarely mistaken for ours; the status record's error_kind removes the
// remaining doubt.
const std::vector<ExitCodeRow>& exit_code_table() {
  static const std::vector<ExitCodeRow> table = {
      {ErrorKind::usage, 200, "usage", "bad command line: unknown flag, bad value, missing command"},
      {ErrorKind::config, 201, "config", "bad configuration file (seat config, registry, credtable): named with file:line"},
      {ErrorKind::internal, 202, "internal", "unexpected launcher failure (a bug or an OS error)"},
      {ErrorKind::podman_unreachable, 203, "podman_unreachable", "the podman API socket did not answer"},
      {ErrorKind::image_missing, 204, "image_missing", "the image is not present on the seat (never pulled implicitly)"},
      {ErrorKind::create_failed, 205, "create_failed", "podman refused to create the container"},
      {ErrorKind::start_failed, 206, "start_failed", "the container was created but did not start"},
      {ErrorKind::command_not_found, 207, "command_not_found", "the command does not exist inside the container (podman's 127 case)"},
      {ErrorKind::command_not_executable, 208, "command_not_executable", "the command exists inside but cannot be executed (podman's 126 case)"},
      {ErrorKind::limits_unenforced, 209, "limits_unenforced", "the resource limits would not hold: podman said it would ignore them and the seat config holds no waiver, or a warm member's cgroup did not take the session's"},
      {ErrorKind::killed_oom, 210, "killed_oom", "killed: out of memory (the session's memory limit)"},
      {ErrorKind::killed_timeout, 211, "killed_timeout", "killed: the session's --timeout passed"},
      {ErrorKind::credential_unresolved, 212, "credential_unresolved", "a required credential file is missing or unreadable"},
      {ErrorKind::workspace_rejected, 213, "workspace_rejected", "the workspace is missing, not a directory, outside or nested in the permitted root, or not writable by the agent"},
      {ErrorKind::git_unmountable, 214, "git_unmountable", "the workspace's git link does not lead to the --git-mirror and back, or the mirror is outside the permitted roots or the agent's reach"},
      {ErrorKind::seat_preflight, 215, "seat_preflight", "NoNewPrivs is set and the seat cannot re-exec (linger, runtime dir or user bus missing)"},
      {ErrorKind::systemd_run_failed, 216, "systemd_run_failed", "systemd-run could not start the transient unit"},
      {ErrorKind::reexec_loop, 217, "reexec_loop", "a re-exec'd launcher still saw NoNewPrivs=1"},
      {ErrorKind::no_seat, 218, "no_seat", "no agent-seat host was reachable with free capacity"},
      {ErrorKind::host_key_rejected, 219, "host_key_rejected", "the seat's ssh host key is unknown or changed"},
      {ErrorKind::ssh_failed, 220, "ssh_failed", "the ssh session to the seat failed or dropped"},
      {ErrorKind::unsafe_refused, 221, "unsafe_refused", "agent-sandbox-unsafe refused: not a human at a terminal"},
      {ErrorKind::seat_full, 222, "seat_full", "sandbox-run --slots N: every slot of the seat is taken, or every user namespace range (1024) is held by a live session (the caller tries the next seat)"},
      {ErrorKind::credential_expiring, 223, "credential_expiring", "the credential would need a refresh before the session can end (refresh it on the host first)"},
      {ErrorKind::egress_unavailable, 224, "egress_unavailable", "the egress door (the proxy's listener inside the container) could not be opened; nothing ran"},
      {ErrorKind::tripwire, 225, "tripwire", "the tripwire ended the session at its first trip (seat config tripwire = \"kill\"), or could not be set up (nothing ran then)"},
      {ErrorKind::credential_exposed, 226, "credential_exposed", "inject mode: a real token value was found inside the container at the session's end (the record names where; the value never)"},
      {ErrorKind::host_git_unavailable, 227, "host_git_unavailable", "agent-sandbox git: the host's git (/usr/bin/git) is missing or could not be run; nothing ran"},
      {ErrorKind::sweep_incomplete, 228, "sweep_incomplete", "the check after the session could not sweep or set aside everything the agent left in the workspace or its git dirs (the record's git.unswept names what); do not run git or programs there before removing it"},
      {ErrorKind::killed_disk, 229, "killed_disk", "killed (or found after it ended): the session reached its disk budget (--disk, [limits] disk: bytes or inodes added in the workspace and the writable git dirs, files it held open without a name included), wrote below the seat's disk floor, or made its workspace too deep or too large to measure (the record names the budget, the peak, how it was kept)"},
      {ErrorKind::attach_refused, 230, "attach_refused", "attach/stop: no persistent session of that id on the seat, or it is another user's"},
      {ErrorKind::isolation_unavailable, 231, "isolation_unavailable", "the session asked for or the seat requires gVisor (runsc) and it is missing or one of the session's guarantees cannot hold under it, or its podman service ran the sandbox on another platform or network than the seat's (what the sandbox's boot logged); or the session's user namespace (user_namespace = \"range\", a rootful runc seat's default) cannot be given: a bind whose filesystem cannot be idmapped (the message names the seat config's `user_namespace = \"host\"`), or gVisor in a seat that says \"range\"; refused before the agent ran"},
      {ErrorKind::disk_floor, 232, "disk_floor", "a filesystem the session could write has less free space or free inodes than the seat's disk floor ([limits] disk_floor); nothing was created"},
      {ErrorKind::seccomp_unavailable, 233, "seccomp_unavailable", "the seat's podman default seccomp profile is missing or unreadable, the session's profile could not be written, or its recorder's socket could not be bound or was handed no notify fd by runc, or (gVisor) the sentry opened no log for the recorder; the agent never started"},
      {ErrorKind::killed_pids, 234, "killed_pids", "killed: a gVisor session's sandbox reached its pids limit (the sandbox's own tasks and about ten per agent process count there; --pids N means about N processes) and runsc ended it; the code runsc reported is the record's agent_exit_code, not the agent's verdict"},
  };
  return table;
}

const ExitCodeRow& row_of(ErrorKind kind) {
  for (const auto& row : exit_code_table())
    if (row.kind == kind) return row;
  return exit_code_table().at(2);  // internal; unreachable while the table is complete
}

int exit_code_of(ErrorKind kind) { return row_of(kind).code; }
const char* name_of(ErrorKind kind) { return row_of(kind).name; }

ErrorKind kind_from_name(const std::string& name) {
  for (const auto& row : exit_code_table())
    if (name == row.name) return row.kind;
  throw Error(ErrorKind::usage, "unknown error kind '" + name + "'");
}

void rethrow_with_context(const Error& inner, const std::string& outer) {
  throw Error(inner.kind(), outer + ": " + inner.what());
}

}  // namespace asbx
