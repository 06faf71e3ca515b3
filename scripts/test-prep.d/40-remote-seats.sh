#!/usr/bin/env bash
# The two seat hosts of tests/integration/test_remote.py: rd-1 and rd-2, provisioned by up.sh the
# way every seat is — the Debian package from scripts/package.sh, the agent image archive and
# tests/integration/remote/seat.toml (waives unenforced limits: rootless podman on this cgroup-v1
# VM), all through seat-host/provision-seat.sh. Idempotent: running seats are reused, the same
# .deb is not re-installed, the image is loaded only when missing.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
"$ASBX_ROOT/scripts/seat-host/up.sh" 2 --prefix rd --seat-config "$ASBX_ROOT/tests/integration/remote/seat.toml" >/dev/null
