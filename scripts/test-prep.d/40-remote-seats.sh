#!/usr/bin/env bash
# The two seat hosts of tests/integration/test_remote.py: rd-1 and rd-2, booted with the agent
# image, this build's sandbox-run and a seat.toml that waives unenforced limits (rootless podman
# on this cgroup-v1 VM). Idempotent: running seats are reused; sandbox-run is re-copied only when
# it changed; the image archive comes from seat-host/image-archive.sh and is loaded only when missing.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
seat_host=$ASBX_ROOT/scripts/seat-host
archive=$("$seat_host/image-archive.sh")  # shared, locked, rewritten only when the image changed
"$seat_host/up.sh" 2 --prefix rd --sandbox-run "$ASBX_BUILD/sandbox-run" --image-archive "$archive" \
  --seat-config "$ASBX_ROOT/tests/integration/remote/seat.toml" >/dev/null
for seat in rd-1 rd-2; do
  # up.sh copies sandbox-run only on first boot; keep it equal to this build.
  want=$(sha256sum <"$ASBX_BUILD/sandbox-run")
  have=$("$seat_host/ssh.sh" "$seat" 'sha256sum </usr/local/bin/sandbox-run' || true)
  [[ $want == "$have" ]] || podman cp "$ASBX_BUILD/sandbox-run" "$seat:/usr/local/bin/sandbox-run"
  # The credential table where sandbox-run looks for an installed one (ASBX_CREDTABLE_INSTALLED).
  "$seat_host/ssh.sh" "$seat" 'cat /usr/local/share/agent-sandbox/credtable.toml 2>/dev/null' |
    cmp -s - "$ASBX_ROOT/credtable/credtable.toml" || {
    podman exec "$seat" mkdir -p /usr/local/share/agent-sandbox
    podman cp "$ASBX_ROOT/credtable/credtable.toml" "$seat:/usr/local/share/agent-sandbox/credtable.toml"
    podman exec "$seat" chmod 0644 /usr/local/share/agent-sandbox/credtable.toml
  }
  # sandbox-run talks to the seat's rootless podman API (socket-activated).
  "$seat_host/ssh.sh" "$seat" 'systemctl --user enable --now podman.socket 2>/dev/null'
done
