#!/usr/bin/env bash
# The seat host test_preflight.py runs against: pf-1, provisioned by up.sh from the Debian package
# (scripts/package.sh) with the agent image and a seat.toml waiving the limits rootless podman
# cannot enforce on this cgroup-v1 VM (production seats are cgroup v2). Idempotent: a running seat
# is reused, the same .deb not re-installed, the image loaded only when its Id is missing. Writes
# the registry path to $ASBX_RUN/registry-pf.path.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib.sh"
conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
printf '# written by scripts/test-prep.d/40-preflight-seat.sh\nwaive_unenforced_limits = true\n' >"$conf"
reg=$("$ASBX_ROOT/scripts/seat-host/up.sh" 1 --prefix pf --seat-config "$conf")
install -d "$ASBX_RUN"
echo "$reg" >"$ASBX_RUN/registry-pf.path"
