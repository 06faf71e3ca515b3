"""How a dispatcher calls agent-sandbox: the caller library `agent_sandbox` (docs/PYTHON.md,
docs/CALLERS.md), installed by the Debian package. Nothing to copy: import it.

    python3 agent_sandbox_caller.py JOB_ID OUT_DIR [REGISTRY [SEAT]] -- codex exec …

runs the command as session JOB_ID (on a seat of REGISTRY when given), prints the outcome and the
log path as JSON, and exits with the agent's code — or with the launcher's when it failed, never
running the agent another way.
"""
import json
import pathlib
import sys

import agent_sandbox


def dispatch(job_id, command, out_dir, registry=None, seat=None):
    """One job: its log and record in OUT_DIR; the agent's result, or a LauncherError raised."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return agent_sandbox.run_captured(command, str(out / f"{job_id}.log"), str(out / f"{job_id}.json"),
                                      session_id=job_id, registry=registry, host=seat, timeout="30m")


def commit_session(workspace, job_id, git_mirror=None, launcher="agent-sandbox", env=None):
    """The dispatcher's host-side git step after a session: commit what the agent changed, through
    `agent-sandbox git` (docs/CALLERS.md), under which nothing the agent left in the repository runs.
    Returns the new commit's id."""
    def git(*args):
        return agent_sandbox.run_git(workspace, list(args), git_mirror=git_mirror, launcher=launcher, env=env, check=True)
    git("add", "-A")
    git("-c", "user.name=dispatcher", "-c", "user.email=dispatcher@localhost", "commit", "-qm", f"agent: {job_id}")
    return git("rev-parse", "HEAD").stdout.decode().strip()


def main(argv):
    if "--" not in argv or not 2 <= argv.index("--") <= 4:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    dash = argv.index("--")
    job_id, out_dir, *where = argv[:dash]
    try:
        run = dispatch(job_id, argv[dash + 1:], out_dir, *where)
    except agent_sandbox.LauncherError as e:  # fail the job; never run the agent elsewhere
        print(json.dumps({"error_kind": e.kind, "exit_code": e.exit_code, "message": e.message}))
        return e.exit_code
    print(json.dumps({"outcome": run.outcome, "exit_code": run.exit_code, "seat": run.seat, "log": run.log_path}))
    return run.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
