"""The dispatcher's host-side git step: `agent-sandbox git --workspace WS [--git-mirror M] -- ARGS…`.

After a session the workspace and the git mirror are the agent's writing, hostile to a plain `git`
on the host (hooks, config, fsmonitor: docs/MOUNTS.md); the launcher's `git` subcommand runs git
on them safely and passes git's exit code through. This module builds that argv and runs it; it
never runs git itself.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import IO, Any, Mapping, Optional, Sequence, Union

from ._table import ERRORS, EXIT_CODES
from .errors import GitFailed

KIND_OF_CODE = {code: kind for kind, code in EXIT_CODES.items()}
Stream = Union[int, IO[Any], None]


@dataclass
class GitResult:
    exit_code: int            # git's own exit code
    stdout: Optional[bytes]   # None when stdout went elsewhere (a file passed as stdout=)
    stderr: Optional[bytes]


def git_argv(workspace: str, args: Sequence[str], *, git_mirror: Optional[str] = None,
             launcher: str = "agent-sandbox") -> list[str]:
    """The launcher's argv for one git command on a session's workspace (pure)."""
    if isinstance(args, (str, bytes)):
        raise TypeError("args must be a list of strings, e.g. ['log', '--oneline']")
    mirror = ["--git-mirror", git_mirror] if git_mirror is not None else []
    return [launcher, "git", "--workspace", workspace, *mirror, "--", *[str(a) for a in args]]


def run_git(workspace: str, args: Sequence[str], *, git_mirror: Optional[str] = None,
            launcher: str = "agent-sandbox", check: bool = False, stdin: Stream = subprocess.DEVNULL,
            stdout: Stream = subprocess.PIPE, stderr: Stream = subprocess.PIPE,
            env: Optional[Mapping[str, str]] = None) -> GitResult:
    """Runs git through the launcher. A launcher code (200-239; git itself never exits there)
    raises the LauncherError subclass of its kind; git's own code is returned, or raises GitFailed
    when check=True and it is not 0. Pass a file as stdout= for output that may be large: the
    workspace is the agent's, and so is the size of what git prints about it."""
    argv = git_argv(workspace, args, git_mirror=git_mirror, launcher=launcher)
    proc = subprocess.run(argv, stdin=stdin, stdout=stdout, stderr=stderr,
                          env=dict(env) if env is not None else None)
    kind = KIND_OF_CODE.get(proc.returncode)
    if kind is not None:
        message = (proc.stderr or b"").decode(errors="replace").strip() or f"agent-sandbox git exited {proc.returncode}"
        raise ERRORS[kind](message, proc.returncode)
    if check and proc.returncode != 0:
        raise GitFailed(list(args), proc.returncode, proc.stderr)
    return GitResult(proc.returncode, proc.stdout, proc.stderr)
