#!/usr/bin/env bash
# Build the local base image ($ASBX_BASE_IMAGE) with debootstrap — registry pulls are impossible
# on our build machines, the Debian apt mirror is reachable.
#
#   scripts/build-base.sh [--force]
#
# Cache: $ASBX_CACHE/base/<suite>-<key>.tar is a tarball of the debootstrapped tree; <key> is a
# hash of suite + variant + include list. The image carries the key in the label
# org.agent-sandbox.base-key; when the image exists with the same key this script does nothing.
# The image is imported under a temporary tag and only then tagged, so an interrupted run never
# leaves a half-made $ASBX_BASE_IMAGE behind.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUITE=bookworm
VARIANT=minbase
INCLUDE=bash,coreutils,git,ca-certificates,procps
KEY_LABEL=org.agent-sandbox.base-key

asbx_force_arg "$@"

[[ $(id -u) -eq 0 ]] || asbx_die "must run as root (debootstrap and rootful podman storage)"
command -v podman >/dev/null || asbx_die "podman not found"

key=$(printf 'suite=%s\nvariant=%s\ninclude=%s\n' "$SUITE" "$VARIANT" "$INCLUDE" | sha256sum | cut -c1-16)

# Fast path: image present with the same key.
if [[ $force -eq 0 ]] && asbx_image_current "$ASBX_BASE_IMAGE" "$KEY_LABEL" "$key" key; then
  exit 0
fi

# Mirror: first URIs line of the system's deb822 sources (the main archive, not security).
mirror_url() {
  local f=/etc/apt/sources.list.d/debian.sources url=
  if [[ -r $f ]]; then
    url=$(awk 'tolower($1)=="uris:" {print $2; exit}' "$f")
  fi
  if [[ -z $url && -r /etc/apt/sources.list ]]; then
    url=$(awk '$1=="deb" && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list)
  fi
  [[ -n $url ]] || asbx_die "cannot find a Debian mirror URL in /etc/apt/sources.list.d/debian.sources"
  printf '%s\n' "$url"
}

cache_dir=$ASBX_CACHE/base
tarball=$cache_dir/$SUITE-$key.tar
mkdir -p "$cache_dir"

work=
cleanup() {
  [[ -n $work && -d $work ]] || return 0
  # debootstrap mounts proc/sys inside the target; unmount anything below it before removing.
  local m
  while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done < <(awk -v p="$work/" 'index($2, p) == 1 {print $2}' /proc/mounts | sort -r)
  rm -rf --one-file-system "$work"
}
asbx_trap_exit cleanup

if [[ ! -s $tarball ]]; then
  command -v debootstrap >/dev/null || asbx_die "debootstrap not found (apt-get install -y debootstrap)"
  url=$(mirror_url)
  work=$(mktemp -d "$cache_dir/.tree.XXXXXX")
  asbx_log "debootstrap $VARIANT $SUITE from $url into $work (include: $INCLUDE) — takes a few minutes"
  start=$SECONDS
  # debootstrap's progress goes to stderr; keep stdout clean.
  if ! debootstrap --variant="$VARIANT" --include="$INCLUDE" "$SUITE" "$work/root" "$url" >&2; then
    [[ -f $work/root/debootstrap/debootstrap.log ]] && tail -n 20 "$work/root/debootstrap/debootstrap.log" >&2
    asbx_die "debootstrap failed"
  fi
  asbx_log "debootstrap done in $((SECONDS - start)) s; trimming and packing"
  # Package caches and apt lists are not needed in the image (and are stale by the time it runs).
  rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/cache/apt/"*.bin \
         "$work/root/var/lib/apt/lists/"* "$work/root/var/log/"*.log "$work/root/debootstrap"
  # Pack, then publish atomically: a half-written tarball never has the final name.
  tar --numeric-owner --xattrs --xattrs-include='*' -C "$work/root" -cf "$tarball.part" .
  mv -f "$tarball.part" "$tarball"
  rm -rf --one-file-system "$work"
  work=
  asbx_log "cached $tarball ($(du -h "$tarball" | cut -f1))"
else
  asbx_log "using cached tree $tarball"
fi

asbx_log "importing $tarball as $ASBX_BASE_IMAGE"
asbx_temp_tag "$ASBX_BASE_IMAGE"
podman import --quiet \
  --change "LABEL $KEY_LABEL=$key" \
  --change "LABEL org.opencontainers.image.title=agent-sandbox-base" \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "CMD [\"/bin/bash\"]" \
  --message "debootstrap $VARIANT $SUITE include=$INCLUDE" \
  "$tarball" "$asbx_tmp_tag" >/dev/null || asbx_die "podman import failed"
new_id=$(podman image inspect --format '{{.Id}}' "$asbx_tmp_tag") || asbx_die "imported image not found"
asbx_publish_image "$ASBX_BASE_IMAGE" "$new_id" "$KEY_LABEL" "$key"
asbx_log "built $ASBX_BASE_IMAGE (${new_id:0:12}, key $key)"
