"""Reference caller of agent-sandbox's capture contract (docs/CALLERS.md).

Standard library only; copy it into a dispatcher. It runs exactly one program, the
launcher (also for the dispatcher's own git steps: `run_git`), and never anything else on the host: a launcher failure raises, it is never retried
another way. An agent's own exit code, zero or not, is a normal return.

    run = run_captured(["codex", "exec", "fix the tests"], log_path="/var/log/d/job-7.log",
                       status_path="/var/log/d/job-7.json", session_id="job-7")
    run.exit_code, run.log_path, run.record
    run_git(workspace, ["log", "--format=%H", "-1"]).stdout   # the host's git, through the launcher
"""
import json
import os
import subprocess
from dataclasses import dataclass

# `agent-sandbox exit-codes --json`, name -> code; a test pins this equal to the launcher's.
EXIT_CODES = {
    "usage": 200,
    "config": 201,
    "internal": 202,
    "podman_unreachable": 203,
    "image_missing": 204,
    "create_failed": 205,
    "start_failed": 206,
    "command_not_found": 207,
    "command_not_executable": 208,
    "limits_unenforced": 209,
    "killed_oom": 210,
    "killed_timeout": 211,
    "credential_unresolved": 212,
    "workspace_rejected": 213,
    "git_unmountable": 214,
    "seat_preflight": 215,
    "systemd_run_failed": 216,
    "reexec_loop": 217,
    "no_seat": 218,
    "host_key_rejected": 219,
    "ssh_failed": 220,
    "unsafe_refused": 221,
    "seat_full": 222,
    "credential_expiring": 223,
    "egress_unavailable": 224,
    "host_git_unavailable": 227,
}


class LauncherError(Exception):
    """The launcher failed; the agent's own result is unknown or absent. Never run it elsewhere."""
    kind = None

    def __init__(self, message, exit_code, record=None, log_path=None):
        super().__init__(message)
        self.message, self.exit_code, self.record, self.log_path = message, exit_code, record, log_path


class UsageError(LauncherError): kind = "usage"
class ConfigError(LauncherError): kind = "config"
class InternalError(LauncherError): kind = "internal"
class PodmanUnreachable(LauncherError): kind = "podman_unreachable"
class ImageMissing(LauncherError): kind = "image_missing"
class CreateFailed(LauncherError): kind = "create_failed"
class StartFailed(LauncherError): kind = "start_failed"
class CommandNotFound(LauncherError): kind = "command_not_found"
class CommandNotExecutable(LauncherError): kind = "command_not_executable"
class LimitsUnenforced(LauncherError): kind = "limits_unenforced"
class KilledOom(LauncherError): kind = "killed_oom"
class KilledTimeout(LauncherError): kind = "killed_timeout"
class CredentialUnresolved(LauncherError): kind = "credential_unresolved"
class WorkspaceRejected(LauncherError): kind = "workspace_rejected"
class GitUnmountable(LauncherError): kind = "git_unmountable"
class SeatPreflight(LauncherError): kind = "seat_preflight"
class SystemdRunFailed(LauncherError): kind = "systemd_run_failed"
class ReexecLoop(LauncherError): kind = "reexec_loop"
class NoSeat(LauncherError): kind = "no_seat"
class HostKeyRejected(LauncherError): kind = "host_key_rejected"
class SshFailed(LauncherError): kind = "ssh_failed"
class UnsafeRefused(LauncherError): kind = "unsafe_refused"
class SeatFull(LauncherError): kind = "seat_full"
class CredentialExpiring(LauncherError): kind = "credential_expiring"
class EgressUnavailable(LauncherError): kind = "egress_unavailable"
class HostGitUnavailable(LauncherError): kind = "host_git_unavailable"
# Not in the launcher's table: the contract itself was broken (no record, wrong stdout).
class ContractBroken(LauncherError): kind = "contract_broken"


ERRORS = {cls.kind: cls for cls in LauncherError.__subclasses__() if cls is not ContractBroken}
KIND_OF_CODE = {code: kind for kind, code in EXIT_CODES.items()}


@dataclass
class CapturedRun:
    """The agent ran in its container and ended: exited (any code) or killed by the caller's signal."""
    exit_code: int           # what the launcher returned: the agent's own code when outcome == "exited"
    outcome: str             # "exited" | "killed"
    log_path: str
    record: dict


def run_captured(command, log_path, status_path, session_id=None, options=(), launcher="agent-sandbox",
                 stdin=subprocess.DEVNULL, timeout=None, env=None):
    """Runs `command` in a sandbox; returns CapturedRun or raises a LauncherError subclass."""
    argv = [launcher, "--capture-log", log_path, "--status-file", status_path]
    argv += ["--id", session_id] if session_id else []
    argv += [*options, "--", *command]
    _remove_stale(status_path)
    proc = subprocess.run(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          env=env)
    record = _read_record(status_path)
    stderr = proc.stderr.decode(errors="replace").strip()
    _check_stdout(proc.stdout, log_path, proc.returncode, record, stderr)
    return _classify(proc.returncode, record, log_path, stderr)


def run_git(workspace, args, git_mirror=None, launcher="agent-sandbox", **run):
    """The dispatcher's own git steps in a workspace an agent wrote (commit, log, diff, push), through
    `agent-sandbox git`: never the host's plain git, which would obey what the agent left there
    (docs/CALLERS.md). Returns git's CompletedProcess (any git code); raises a LauncherError subclass
    when the launcher itself refused (a launcher code, 200-231)."""
    argv = [launcher, "git", "--workspace", str(workspace)]
    argv += ["--git-mirror", str(git_mirror)] if git_mirror else []
    proc = subprocess.run([*argv, "--", *args], capture_output=True, text=True, **run)
    kind = KIND_OF_CODE.get(proc.returncode)
    if kind:
        raise ERRORS[kind](proc.stderr.strip(), proc.returncode)
    return proc


def _remove_stale(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _read_record(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _check_stdout(stdout, log_path, code, record, stderr):
    """stdout is exactly the log path + newline, or empty when the launcher failed before creating the log."""
    if stdout == (log_path + "\n").encode() or (stdout == b"" and code in KIND_OF_CODE):
        return
    raise ContractBroken(f"launcher stdout was {stdout[:200]!r}, expected the log path; stderr: {stderr}",
                         code, record, log_path)


def _classify(code, record, log_path, stderr):
    if record is None:
        kind = KIND_OF_CODE.get(code)
        cls = ERRORS.get(kind, ContractBroken)
        raise cls(f"launcher exited {code} without a status record: {stderr}", code, None, log_path)
    if record.get("error_kind"):
        cls = ERRORS.get(record["error_kind"], ContractBroken)
        raise cls(record.get("message") or stderr, code, record, log_path)
    if record.get("outcome") not in ("exited", "killed") or record.get("exit_code") != code:
        raise ContractBroken(f"status record does not match exit code {code}: {record}", code, record, log_path)
    return CapturedRun(exit_code=code, outcome=record["outcome"], log_path=log_path, record=record)
