"""python3 -m agent_sandbox buildbox …   (the buildbox harness from a shell; see agent_sandbox.buildbox)"""
import sys

from . import buildbox

USAGE = "usage: python3 -m agent_sandbox buildbox [--registry R] [--host H] REPO_DIR OUT_DIR -- TEST COMMAND…"

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "buildbox":
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    sys.exit(buildbox.main(sys.argv[2:]))
