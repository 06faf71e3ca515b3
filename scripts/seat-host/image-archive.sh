#!/usr/bin/env bash
# Prints the path of a `podman save` archive of the agent image (for up.sh --image-archive),
# writing it first unless the archive there already holds the current image Id.
# Safe to run concurrently: writers take a lock, write a temp file and rename it into place, so a
# reader never sees a half-written archive under the final name.
#
# usage: image-archive.sh [IMAGE]   (default localhost/agent-sandbox:latest)
# Path: ${ASBX_IMAGE_ARCHIVE:-$ASBX_CACHE/agent-image.tar}
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/../lib.sh"

image=${1:-$ASBX_IMAGE}
archive=${ASBX_IMAGE_ARCHIVE:-$ASBX_CACHE/agent-image.tar}

# The image Id a docker-archive holds: manifest.json names the config blob <Id>.json.
archive_id() {
  tar -xOf "$1" manifest.json 2>/dev/null |
    grep -o '"Config":"[^"]*"' | head -n1 | sed 's/.*"\(sha256:\)\{0,1\}\([0-9a-f]\{64\}\)\.json"$/\2/;t;d' || true
}

want=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null) ||
  asbx_die "$image is not present (run scripts/build-image.sh)"
install -d -m 0755 "$(dirname "$archive")"
exec 9>"$archive.lock"
flock -w 600 9 || asbx_die "another image-archive.sh holds $archive.lock"
if [[ -f $archive && $(archive_id "$archive") == "$want" ]]; then
  asbx_log "$archive holds ${want:0:12}, reused"
else
  t0=$(date +%s)
  tmp=$(mktemp "$archive.XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  rm -f "$tmp"  # podman save refuses to overwrite
  podman save -q -o "$tmp" "$image" 9>&-
  [[ $(archive_id "$tmp") == "$want" ]] || asbx_die "podman save wrote an archive without image ${want:0:12}"
  chmod 0644 "$tmp"
  mv "$tmp" "$archive"
  trap - EXIT
  asbx_log "wrote $archive (${want:0:12}) in $(($(date +%s) - t0)) s"
fi
echo "$archive"
