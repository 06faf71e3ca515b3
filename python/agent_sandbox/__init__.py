"""agent_sandbox: the Python caller of agent-sandbox (docs/PYTHON.md, docs/CALLERS.md).

Standard library only. It runs the launcher and nothing else: a launcher failure raises a
LauncherError subclass named after the launcher's error_kind, it is never retried another way.

    import agent_sandbox
    run = agent_sandbox.run_captured(["codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "fix it"],
                                     "/var/log/d/job-7.log", "/var/log/d/job-7.json", session_id="job-7",
                                     registry="/etc/d/registry.toml", runtime="codex",
                                     workspace="/home/seat/sandbox/workspaces/job-7", timeout="30m")
    run.exit_code, run.seat, run.log_path, run.record
"""
from ._table import ERRORS, EXIT_CODES, LAUNCHER_VERSION, MEANINGS
from ._table import *  # noqa: F401,F403  one exception class per error_kind (ImageMissing, SshFailed, ...)
from .buildbox import TestRun, run_tests, session_id_for
from .capture import KIND_OF_CODE, CapturedRun, capture_argv, run_captured
from .errors import ContractBroken, GitFailed, LauncherError
from .git import GitResult, git_argv, run_git

__version__ = LAUNCHER_VERSION
__all__ = ["CapturedRun", "ContractBroken", "ERRORS", "EXIT_CODES", "GitFailed", "GitResult", "KIND_OF_CODE",
           "LAUNCHER_VERSION", "LauncherError", "MEANINGS", "TestRun", "capture_argv", "git_argv", "run_captured",
           "run_git", "run_tests", "session_id_for", *(cls.__name__ for cls in ERRORS.values())]
