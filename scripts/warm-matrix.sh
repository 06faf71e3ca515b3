#!/usr/bin/env bash
# The suites that prove a session's guarantees, again with every rootful runc test seat keeping a
# warm pool (ASBX_TEST_POOL: members filled when the seat is made, refilled after each warm session),
# so every session that fits runs on the warm path (docs/DECISIONS.md "Issue 37: the warm pool"), and
# one member made with a terminal (ASBX_TEST_POOL_TTY) for the --tty sessions of test_interactive.
# ctest's warm_matrix_short runs a short subset; this is the long matrix.
# usage: warm-matrix.sh [unittest names...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
suites=("$@")
((${#suites[@]})) || suites=(test_denial_proofs test_hostile_agent test_credentials test_seccomp_record
                             test_seccomp_surface test_tripwire test_disk test_disk_holes test_lifecycle
                             test_cleanup_off_path test_foundation test_hostile_output test_inject test_inject_scope
                             test_tripwire_inject
                             test_host_git test_git_leftovers test_warm_git test_state test_mounts test_egress
                             test_interactive)
cd "$ASBX_ROOT/tests/integration"
ASBX_TEST_POOL=${ASBX_TEST_POOL:-2} ASBX_TEST_POOL_TTY=${ASBX_TEST_POOL_TTY:-1} ASBX_BUILD=$ASBX_BUILD exec python3 -m unittest -v "${suites[@]}"
