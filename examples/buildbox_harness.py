"""How the buildbox test harness calls agent-sandbox: `agent_sandbox.run_tests()` of the caller
library (docs/PYTHON.md, docs/CALLERS.md). The same from a shell, without this file:

    python3 -m agent_sandbox buildbox [--registry REG --host SEAT] REPO_DIR OUT_DIR -- make check
"""
import sys

import agent_sandbox


def check_repository(repo_dir, out_dir, registry=None, seat=None):
    """`make check` in the repository (a path on the seat when dispatched); True when it passed."""
    try:
        result = agent_sandbox.run_tests(repo_dir, "make check", out_dir, registry=registry, host=seat)
    except agent_sandbox.LauncherError as e:  # the tests did not run: fail the build, never run them here
        print(f"buildbox: {e}", file=sys.stderr)
        return False
    print(f"buildbox: exit {result.exit_code}, log {result.log_path}", file=sys.stderr)
    return result.passed


if __name__ == "__main__":
    sys.exit(0 if check_repository(*sys.argv[1:]) else 1)
