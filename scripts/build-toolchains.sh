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

force=0
for arg in "$@"; do
  case $arg in
    --force) force=1 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) asbx_die "unknown argument: $arg (see --help)" ;;
  esac
done

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

tmp_tag=
cleanup() {
  local rc=$?
  asbx_drop_temp_tag "$tmp_tag" "$ASBX_TOOLCHAINS_IMAGE"
  [[ $rc -eq 0 ]] || asbx_log "failed (exit $rc)"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$ASBX_ROOT/scripts/build-base.sh" >&2 || asbx_die "build-base.sh failed"
base_id=$(podman image inspect --format '{{.Id}}' "$ASBX_BASE_IMAGE") ||
  asbx_die "base image $ASBX_BASE_IMAGE missing after build-base.sh"

input_hash=$(printf 'containerfile %s\nbase %s\nmirror %s %s\n' "$(sha256sum < "$FILE" | cut -d' ' -f1)" \
  "$base_id" "$mirror" "$security" | sha256sum | cut -d' ' -f1)
have=$(podman image inspect --format "{{index .Labels \"$HASH_LABEL\"}}" "$ASBX_TOOLCHAINS_IMAGE" 2>/dev/null || true)
if [[ $force -eq 0 && $have == "$input_hash" ]]; then
  asbx_log "$ASBX_TOOLCHAINS_IMAGE is up to date (input hash ${input_hash:0:16})"
  exit 0
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"; cleanup' EXIT
cp "$FILE" "$ctx/Containerfile"
old_id=$(podman image inspect --format '{{.Id}}' "$ASBX_TOOLCHAINS_IMAGE" 2>/dev/null || true)
tmp_tag=${ASBX_TOOLCHAINS_IMAGE%:*}-building:$$
asbx_log "podman build $ASBX_TOOLCHAINS_IMAGE (apt from $mirror and $security; ≈ 3 min cold)"
start=$SECONDS
podman build --pull=never --network=host --layers \
  --build-arg "BASE=$ASBX_BASE_IMAGE" --build-arg "MIRROR=$mirror" --build-arg "SECURITY_MIRROR=$security" \
  --label "$HASH_LABEL=$input_hash" --iidfile "$ctx/.iid" \
  -t "$tmp_tag" -f "$ctx/Containerfile" "$ctx" >&2 ||
  asbx_die "podman build of Containerfile.toolchains failed (a pin the mirror no longer has? see docs/IMAGE.md)"
new_id=$(<"$ctx/.iid"); new_id=${new_id#sha256:}
podman tag "$new_id" "$ASBX_TOOLCHAINS_IMAGE" || asbx_die "podman tag failed"
podman untag "$new_id" "$tmp_tag" || asbx_die "podman untag $tmp_tag failed"
tmp_tag=
if [[ -n $old_id && $old_id != "$new_id" ]]; then
  podman rmi "$old_id" >/dev/null 2>&1 || true
fi
asbx_log "built $ASBX_TOOLCHAINS_IMAGE (${new_id:0:12}) in $((SECONDS - start)) s"
