#!/usr/bin/env bash
# The soak (docs/RELIABILITY.md): many sessions with mixed endings (exit codes, timeouts,
# signals, OOM, big output, stdin), a third sequential then concurrent, for MINUTES (default
# 20), against a podman service of its own; asserts at the end that every session is in the
# ledger and nothing is left behind. Exit 1 on any failure.
#   scripts/soak.sh [MINUTES] [--concurrency N] [--big-mib M] [--registry FILE] [--keep]
#   scripts/soak.sh --sequential 300 --concurrency 16 --rounds 10 --registry auto   (counts, not MINUTES)
# The image must exist (scripts/setup.sh). ctest's soak_short runs a short version.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ASBX_BUILD
[[ -x $ASBX_BUILD/agent-sandbox ]] || asbx_die "$ASBX_BUILD/agent-sandbox is not built"
exec /usr/bin/python3 "$ASBX_ROOT/scripts/soak.py" "$@"
