"""The exceptions: one LauncherError subclass per launcher error_kind (generated into _table.py
from the launcher's own table), and ContractBroken when the launcher broke the capture contract."""
from __future__ import annotations

from typing import Any, Optional


class LauncherError(Exception):
    """The launcher failed; the agent's own result is unknown or absent. Never run it another way.

    kind       the launcher's error_kind (the record's "error_kind"), e.g. "image_missing"
    exit_code  what the launcher returned (200-239 for its own failures)
    message    the cause in the launcher's words (the record's "message", else its stderr)
    record     the status record, or None when there was none
    log_path   the capture log (it exists once the launcher got that far), or None
    """
    kind: str = "launcher_error"

    def __init__(self, message: str, exit_code: int, record: Optional[dict[str, Any]] = None,
                 log_path: Optional[str] = None, kind: Optional[str] = None):
        super().__init__(message)
        self.message, self.exit_code, self.record, self.log_path = message, exit_code, record, log_path
        if kind is not None:  # a kind this library does not know (a newer launcher): still named
            self.kind = kind

    @property
    def error_kind(self) -> str:
        return self.kind

    def __str__(self) -> str:
        return f"{self.kind} ({self.exit_code}): {self.message}"


class ContractBroken(LauncherError):
    """Not in the launcher's table: stdout, the exit code or the record broke docs/CALLERS.md."""
    kind = "contract_broken"


class GitFailed(Exception):
    """`agent-sandbox git … -- ARGS` ran git, and git exited non-zero (run_git(check=True))."""

    def __init__(self, args: list[str], exit_code: int, stderr: Optional[bytes]):
        super().__init__(f"git {' '.join(args)} exited {exit_code}")
        self.git_args, self.exit_code, self.stderr = args, exit_code, stderr
