"""run_captured(): the dispatcher's call of the launcher under the capture contract (docs/CALLERS.md).

It runs exactly one program, the launcher, and nothing on the host: a launcher failure raises,
it is never retried another way. An agent's own exit code, zero or not, is a normal return.
The session is local, or dispatched to a seat host when `registry` or `host` is given (or the
caller's default registry file exists: the launcher's rule, docs/REMOTE.md); the contract is the
same either way: LOG on this machine, its path the only thing on stdout, the record in STATUS.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import IO, Any, Mapping, Optional, Sequence, Union

from ._table import ERRORS, EXIT_CODES
from .errors import ContractBroken, LauncherError

KIND_OF_CODE = {code: kind for kind, code in EXIT_CODES.items()}
STDERR_KEPT = 64 * 1024
Stdin = Union[int, IO[Any], None]


@dataclass
class CapturedRun:
    """The agent ran in its container and ended: exited (any code) or killed by a signal."""
    exit_code: int   # what the launcher returned: the agent's own code when outcome == "exited"
    outcome: str     # "exited" | "killed"
    log_path: str    # the agent's stdout and stderr, as they arrived
    record: dict     # the status record (seat, state, limits, counters, durations, ...)

    @property
    def seat(self) -> Optional[str]:
        """The seat host that ran it, None for a local session."""
        return self.record.get("seat")


def _duration(timeout: Union[str, int, float, None]) -> Optional[str]:
    """--timeout's value: a duration as the launcher writes it ("90s", "30m"), or seconds."""
    if timeout is None or isinstance(timeout, str):
        return timeout
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"timeout must be a duration like '30m' or a positive number of seconds, not {timeout!r}")
    return f"{int(timeout)}s" if float(timeout).is_integer() else f"{int(timeout * 1000)}ms"


def _words(name: str, value: Sequence[str]) -> list[str]:
    if isinstance(value, (str, bytes)):  # a string would be split into letters
        raise TypeError(f"{name} must be a list of strings, not {type(value).__name__}")
    return [str(v) for v in value]


def capture_argv(command: Sequence[str], log_path: str, status_path: str, *, session_id: Optional[str] = None,
                 registry: Optional[str] = None, host: Optional[str] = None, runtime: Optional[str] = None,
                 account: Optional[str] = None, credential: Optional[str] = None, workspace: Optional[str] = None,
                 git_mirror: Optional[str] = None, network: Optional[str] = None, egress: Sequence[str] = (),
                 state_dir: Optional[str] = None, timeout: Union[str, int, float, None] = None,
                 image: Optional[str] = None, options: Sequence[str] = (),
                 launcher: str = "agent-sandbox") -> list[str]:
    """The launcher's argv for run_captured() (pure; same keywords)."""
    command = _words("command", command)
    if not command:
        raise ValueError("command is empty")
    argv = [launcher, "--capture-log", log_path, "--status-file", status_path]
    for flag, value in (("--registry", registry), ("--host", host), ("--id", session_id), ("--image", image),
                        ("--runtime", runtime), ("--account", account), ("--credential", credential),
                        ("--workspace", workspace), ("--git-mirror", git_mirror), ("--network", network),
                        ("--state-dir", state_dir), ("--timeout", _duration(timeout))):
        if value is not None:
            argv += [flag, str(value)]
    for rule in _words("egress", egress):
        argv += ["--egress", rule]
    return argv + _words("options", options) + ["--", *command]


def run_captured(command: Sequence[str], log_path: str, status_path: str, *, session_id: Optional[str] = None,
                 registry: Optional[str] = None, host: Optional[str] = None, runtime: Optional[str] = None,
                 account: Optional[str] = None, credential: Optional[str] = None, workspace: Optional[str] = None,
                 git_mirror: Optional[str] = None, network: Optional[str] = None, egress: Sequence[str] = (),
                 state_dir: Optional[str] = None, timeout: Union[str, int, float, None] = None,
                 image: Optional[str] = None, options: Sequence[str] = (), launcher: str = "agent-sandbox",
                 stdin: Stdin = subprocess.DEVNULL, env: Optional[Mapping[str, str]] = None) -> CapturedRun:
    """Runs `command` in a sandbox; returns CapturedRun or raises a LauncherError subclass.

    registry/host dispatch to a seat host (workspace, git_mirror, credential are then paths on
    the seat, account and runtime are resolved there); timeout ("30m" or seconds) is the
    session's, enforced by the launcher, which then removes the container and writes the record:
    there is no wall-clock limit of our own that could leave a container behind. options: more
    launcher flags; stdin goes to the agent (default /dev/null).
    """
    argv = capture_argv(command, log_path, status_path, session_id=session_id, registry=registry, host=host,
                        runtime=runtime, account=account, credential=credential, workspace=workspace,
                        git_mirror=git_mirror, network=network, egress=egress, state_dir=state_dir,
                        timeout=timeout, image=image, options=options, launcher=launcher)
    _remove_stale(status_path)
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=err,
                              env=dict(env) if env is not None else None)
        stderr = stderr_tail(err)
    record = _read_record(status_path)
    check_stdout(proc.stdout, log_path, proc.returncode, record, stderr)
    return classify(proc.returncode, record, log_path, stderr)


def stderr_tail(f: IO[bytes]) -> str:
    """The last STDERR_KEPT bytes of the launcher's stderr, for messages. Its stderr carries the
    launcher's and the seat's diagnostics (e.g. one line per refused egress connection, which the
    agent can multiply): kept in a file, never read whole into memory."""
    size = f.seek(0, os.SEEK_END)
    f.seek(max(0, size - STDERR_KEPT))
    return f.read().decode(errors="replace").strip()


def _remove_stale(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _read_record(path: str) -> Optional[dict]:
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def check_stdout(stdout: bytes, log_path: str, code: int, record: Optional[dict], stderr: str) -> None:
    """stdout is exactly the log path + newline, or empty when the launcher failed before creating LOG."""
    if stdout == (log_path + "\n").encode() or (stdout == b"" and code in KIND_OF_CODE):
        return
    raise ContractBroken(f"launcher stdout was {stdout[:200]!r}, expected the log path; stderr: {stderr}",
                         code, record, log_path)


def classify(code: int, record: Optional[dict], log_path: str, stderr: str) -> CapturedRun:
    """The launcher's exit code and record -> CapturedRun, or the LauncherError subclass of its kind."""
    if record is None:
        kind = KIND_OF_CODE.get(code)
        if kind is None:
            raise ContractBroken(f"launcher exited {code} without a status record: {stderr}", code, None, log_path)
        raise ERRORS[kind](f"launcher exited {code} without a status record: {stderr}", code, None, log_path)
    kind = record.get("error_kind")
    if kind:
        cls = ERRORS.get(kind)
        if cls is None:
            raise LauncherError(record.get("message") or stderr, code, record, log_path, kind=kind)
        raise cls(record.get("message") or stderr, code, record, log_path)
    if record.get("outcome") not in ("exited", "killed") or record.get("exit_code") != code:
        raise ContractBroken(f"status record does not match exit code {code}: {record}", code, record, log_path)
    if record.get("capture_log") != log_path:
        raise ContractBroken(f"status record names capture log {record.get('capture_log')!r}, not {log_path!r}",
                             code, record, log_path)
    return CapturedRun(exit_code=code, outcome=record["outcome"], log_path=log_path, record=record)
