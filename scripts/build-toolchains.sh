#!/usr/bin/env bash
# Build the toolchain image ($ASBX_TOOLCHAINS_IMAGE) from Containerfile.toolchains on top of the
# debootstrap base: the pinned Debian packages (node, npm, python3, rust, gh, build-essential,
# ripgrep, jq, ...), installed by apt from the host's Debian mirror.
#
#   scripts/build-toolchains.sh [--force]
#
# The only build step with network (--network host: apt needs the mirror; apt checks every
# package against the archive's signed Release files). Skipped when the input hash —
# Containerfile.toolchains + base image id + mirror URLs — equals the image's label
# org.agent-sandbox.input-hash. Built under a temporary tag, tagged only when complete.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HASH_LABEL=org.agent-sandbox.input-hash
FILE=$ASBX_ROOT/Containerfile.toolchains

asbx_force_arg "$@"

[[ $(id -u) -eq 0 ]] || asbx_die "must run as root (rootful podman storage)"
[[ -f $FILE ]] || asbx_die "missing $FILE"

# The host's mirrors (deb822 first, then sources.list): the main archive and the security one.
sources_uris() {
  { awk 'tolower($1)=="uris:" {print $2}' /etc/apt/sources.list.d/*.sources 2>/dev/null
    awk '$1=="deb" {for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; break}}' /etc/apt/sources.list 2>/dev/null
  } | grep -E '/debian(-security)?/?$' || true
}
mirror=$(sources_uris | grep -v security | head -n1)
security=$(sources_uris | grep security | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
security=${security:-http://deb.debian.org/debian-security}

ctx=
cleanup() { asbx_rm_tmp_dir "$ctx"; }
asbx_trap_exit cleanup

"$ASBX_ROOT/scripts/build-base.sh" >&2 || asbx_die "build-base.sh failed"
base_id=$(podman image inspect --format '{{.Id}}' "$ASBX_BASE_IMAGE") ||
  asbx_die "base image $ASBX_BASE_IMAGE missing after build-base.sh"

input_hash=$(printf 'containerfile %s\nbase %s\nmirror %s %s\n' "$(sha256sum < "$FILE" | cut -d' ' -f1)" \
  "$base_id" "$mirror" "$security" | sha256sum | cut -d' ' -f1)
if [[ $force -eq 0 ]] && asbx_image_current "$ASBX_TOOLCHAINS_IMAGE" "$HASH_LABEL" "$input_hash" "input hash"; then
  exit 0
fi

ctx=$(mktemp -d)
cp "$FILE" "$ctx/Containerfile"
asbx_log "podman build $ASBX_TOOLCHAINS_IMAGE (apt from $mirror and $security; ≈ 3 min cold)"
asbx_build_image "$ASBX_TOOLCHAINS_IMAGE" "$HASH_LABEL" "$input_hash" "$ctx" \
  "podman build of Containerfile.toolchains failed (a pin the mirror no longer has? see docs/IMAGE.md)" \
  --network=host --build-arg "BASE=$ASBX_BASE_IMAGE" --build-arg "MIRROR=$mirror" --build-arg "SECURITY_MIRROR=$security"
