#!/usr/bin/env bash
# The suites that prove a session's guarantees, again with every rootful test seat saying
# user_namespace = "host" (no user namespace of the session's own; the default, a range, is what the
# rest of the suite runs; docs/DECISIONS.md issue 34).
# ctest's userns_matrix_short runs a short subset; this is the long matrix.
# usage: userns-matrix.sh [unittest names...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
suites=("$@")
((${#suites[@]})) || suites=(test_denial_proofs test_mounts test_hostile_agent test_disk test_disk_dirs
                             test_disk_holes test_git_detect test_git_leftovers test_sweep test_seccomp_record
                             test_seccomp_surface test_state test_inject test_egress test_credentials
                             test_lifecycle test_host_git test_tripwire test_persist_owner test_cleanup_off_path
                             test_image test_foundation test_agents_e2e test_hostile_output test_interactive
                             test_warm_git)
cd "$ASBX_ROOT/tests/integration"
ASBX_TEST_USERNS=host ASBX_BUILD=$ASBX_BUILD exec python3 -m unittest -v "${suites[@]}"
