#!/usr/bin/env bash
# The seat host of tests/integration/test_faults_seat.py: fl-1, which that test kills parts of
# (its sshd, the whole seat) and so shares with no other test. Provisioned like rd-1/rd-2 — the
# Debian package, the agent image archive and tests/integration/remote/seat.toml, through
# seat-host/provision-seat.sh; a running seat is reused. The registry: $ASBX_SEAT_STATE/registry-fl.toml.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
"$ASBX_ROOT/scripts/seat-host/up.sh" 1 --prefix fl --seat-config "$ASBX_ROOT/tests/integration/remote/seat.toml" >/dev/null
