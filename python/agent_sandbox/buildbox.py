"""The buildbox test harness: a repository's test command in a session (docs/CALLERS.md).

The repository is the session's workspace (mounted alone, read-write, as the working directory),
the network is off unless asked; run_tests() hands back the command's exit code, its output log
and the status record. Locally the repository is a path on this machine; dispatched (registry or
host given) it is a path on the seat. A launcher failure raises a LauncherError subclass; the
tests never run on the host instead.

    python3 -m agent_sandbox buildbox [--registry R] [--host H] REPO_DIR OUT_DIR -- TEST COMMAND…
prints the result as JSON and exits with the test command's code (AGENT_SANDBOX names the launcher).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
from dataclasses import asdict, dataclass
from typing import Mapping, Optional, Sequence

from .capture import run_captured
from .errors import LauncherError


@dataclass
class TestRun:
    exit_code: int    # the test command's own exit code
    passed: bool      # exit_code == 0
    log_path: str     # its stdout and stderr, as they came
    status_path: str
    record: dict      # the status record (outcome, seat, limits, counters, durations...)

    __test__ = False  # not a unittest/pytest test case, despite the name


def session_id_for(repo_dir: str) -> str:
    """A session id from the repository's directory name: letters, digits, - _ . only."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", pathlib.PurePath(repo_dir).name).strip(".-") or "repo"
    return f"buildbox-{name}"[:60]


def run_tests(repo_dir: str, test_command: str, out_dir: str, *, session_id: Optional[str] = None,
              registry: Optional[str] = None, host: Optional[str] = None, timeout: str = "30m",
              options: Sequence[str] = (), launcher: str = "agent-sandbox",
              env: Optional[Mapping[str, str]] = None) -> TestRun:
    """Runs `sh -c test_command` in the repository; returns TestRun or raises LauncherError."""
    dispatched = registry is not None or host is not None
    # The launcher refuses a non-canonical workspace; a seat's path is the seat's to resolve.
    repo = str(repo_dir) if dispatched else os.path.realpath(repo_dir)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sid = session_id or session_id_for(repo)
    log_path, status_path = str(out / f"{sid}.log"), str(out / f"{sid}.status.json")
    run = run_captured(["sh", "-c", test_command], log_path, status_path, session_id=sid, registry=registry,
                       host=host, workspace=repo, timeout=timeout, options=options, launcher=launcher, env=env)
    return TestRun(run.exit_code, run.outcome == "exited" and run.exit_code == 0, run.log_path, status_path,
                   run.record)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m agent_sandbox buildbox",
                                     description="run a repository's tests in an agent-sandbox session")
    parser.add_argument("--registry", help="dispatch through this seat registry")
    parser.add_argument("--host", help="dispatch to this registry host")
    parser.add_argument("repo")
    parser.add_argument("out")
    parser.add_argument("command", nargs="+", help="after --: the test command")
    args = parser.parse_args(argv)
    try:
        result = run_tests(args.repo, " ".join(args.command), args.out, registry=args.registry, host=args.host,
                           launcher=os.environ.get("AGENT_SANDBOX", "agent-sandbox"))
    except LauncherError as e:
        print(json.dumps({"launcher_error": e.kind, "message": e.message, "exit_code": e.exit_code}))
        return e.exit_code
    print(json.dumps(asdict(result)))
    return result.exit_code
