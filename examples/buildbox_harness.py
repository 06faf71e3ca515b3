"""The buildbox test harness as an agent-sandbox caller (docs/CALLERS.md).

Runs a repository's test command inside a session — the repository is the session's workspace
(mounted alone, read-write, as the working directory), the network is off unless asked — and
hands back the command's exit code, its output log and the status record. Standard library only;
it runs the launcher and nothing else: a launcher failure raises (a LauncherError subclass of
agent_sandbox_caller), it never runs the tests on the host instead.

    result = run_tests("/home/ci/sandbox/workspaces/repo-42", "make check", "/var/log/bb/repo-42")
    result.exit_code, result.passed, result.log_path, result.record

    python3 buildbox_harness.py REPO_DIR OUT_DIR -- make check     (prints the result as JSON)
"""
import json
import os
import pathlib
import re
import sys
from dataclasses import asdict, dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import agent_sandbox_caller as caller  # noqa: E402


@dataclass
class TestRun:
    exit_code: int  # the test command's own exit code
    passed: bool    # exit_code == 0
    log_path: str   # its stdout and stderr, as they came
    status_path: str
    record: dict    # the status record (outcome, limits, counters, durations...)


def session_id_for(repo_dir):
    """A session id from the repository's directory name: letters, digits, - _ . only."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", pathlib.Path(repo_dir).name).strip(".-") or "repo"
    return f"buildbox-{name}"[:60]


def run_tests(repo_dir, test_command, out_dir, session_id=None, options=(), launcher="agent-sandbox",
              timeout="30m", env=None):
    """Runs `sh -c test_command` in the repository; returns TestRun or raises caller.LauncherError."""
    repo = os.path.realpath(repo_dir)  # the launcher refuses a non-canonical workspace
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sid = session_id or session_id_for(repo)
    log_path, status_path = str(out / f"{sid}.log"), str(out / f"{sid}.status.json")
    run = caller.run_captured(["sh", "-c", test_command], log_path, status_path, session_id=sid,
                              options=["--workspace", repo, "--timeout", timeout, *options], launcher=launcher,
                              env=env)
    return TestRun(run.exit_code, run.outcome == "exited" and run.exit_code == 0, run.log_path, status_path,
                   run.record)


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        print("usage: buildbox_harness.py REPO_DIR OUT_DIR -- TEST COMMAND...", file=sys.stderr)
        return 2
    try:
        result = run_tests(argv[0], " ".join(argv[3:]), argv[1],
                           launcher=os.environ.get("AGENT_SANDBOX", "agent-sandbox"))
    except caller.LauncherError as e:
        print(json.dumps({"launcher_error": e.kind, "message": e.message, "exit_code": e.exit_code}))
        return e.exit_code
    print(json.dumps(asdict(result)))
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
