#!/usr/bin/env bash
# The suites that prove a session's guarantees, again with every rootful test seat requiring
# gVisor (runtime = "runsc"; docs/ISOLATION.md). ctest's gvisor_matrix_short runs a short subset;
# this is the long matrix (test_gvisor is not in it: it runs gVisor sessions in every run, on a seat
# it sets up itself). usage: gvisor-matrix.sh [unittest names...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
suites=("$@")
((${#suites[@]})) || suites=(test_lifecycle test_egress test_inject test_tripwire test_credentials
                             test_host_git test_hostile_output test_interactive test_state test_agents_e2e)
cd "$ASBX_ROOT/tests/integration"
ASBX_TEST_RUNTIME=runsc ASBX_BUILD=$ASBX_BUILD exec python3 -m unittest -v "${suites[@]}"
