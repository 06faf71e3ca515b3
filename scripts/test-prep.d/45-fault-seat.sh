#!/usr/bin/env bash
# The seat host of tests/integration/test_faults_seat.py: fl-1, which that test kills parts of
# (its sshd, the whole seat) and so shares with no other test. Same image archive, sandbox-run
# and seat.toml as rd-1/rd-2; a running seat is reused, sandbox-run re-copied when it changed,
# the image loaded only when missing. The registry: $ASBX_SEAT_STATE/registry-fl.toml.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
seat_host=$ASBX_ROOT/scripts/seat-host
archive=$("$seat_host/image-archive.sh")
"$seat_host/up.sh" 1 --prefix fl --sandbox-run "$ASBX_BUILD/sandbox-run" --image-archive "$archive" \
  --seat-config "$ASBX_ROOT/tests/integration/remote/seat.toml" >/dev/null
want=$(sha256sum <"$ASBX_BUILD/sandbox-run")
have=$("$seat_host/ssh.sh" fl-1 'sha256sum </usr/local/bin/sandbox-run' || true)
[[ $want == "$have" ]] || podman cp "$ASBX_BUILD/sandbox-run" fl-1:/usr/local/bin/sandbox-run
"$seat_host/ssh.sh" fl-1 'systemctl --user enable --now podman.socket 2>/dev/null'
