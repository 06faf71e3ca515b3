#!/usr/bin/env bash
# Removes agent-seat hosts made by up.sh: the containers and their storage volumes, plus their
# lines in known_hosts and ssh_config.d. Only containers whose Id up.sh recorded under
# $ASBX_SEAT_STATE/containers/ (and that carry its label) are touched, and their labelled volumes.
# usage: down.sh [NAME...]     (no NAME: every seat recorded there)
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/../lib.sh"
. "$here/common.sh"

if (($#)); then
  names=("$@")
else
  # the seats this state dir recorded (containers/NAME.id), nothing else
  names=()
  for f in "$ASBX_SEAT_STATE"/containers/*.id; do
    [[ -f $f ]] && names+=("$(basename "$f" .id)")
  done
fi

if [[ -d $ASBX_SEAT_STATE ]]; then
  exec 9>"$ASBX_SEAT_STATE/.lock"
  flock -w 120 9 || asbx_die "another up.sh/down.sh holds $ASBX_SEAT_STATE/.lock"
fi
for name in "${names[@]}"; do
  [[ -n $name ]] || continue
  if podman container exists "$name"; then
    if ! seat_is_ours "$name"; then
      asbx_log "$name: not made by up.sh with $ASBX_SEAT_STATE, left alone"
      continue
    fi
    p=$(seat_port "$name")
    podman rm -f -t 3 "$name" >/dev/null
    if [[ -n $p && -f $SEAT_KNOWN_HOSTS ]]; then
      grep -vF "[127.0.0.1]:$p " "$SEAT_KNOWN_HOSTS" >"$SEAT_KNOWN_HOSTS.new" || true
      mv "$SEAT_KNOWN_HOSTS.new" "$SEAT_KNOWN_HOSTS"
    fi
    asbx_log "$name: removed"
  fi
  [[ -f $ASBX_SEAT_STATE/containers/$name.id ]] || continue
  rm -f "$ASBX_SEAT_STATE/ssh_config.d/$name.conf"
  vol=$name-storage
  # the volume goes once its seat is gone (it is in use while the container exists)
  if ! podman container exists "$name" && podman volume exists "$vol"; then
    label=$(podman volume inspect --format "{{index .Labels \"$SEAT_LABEL\"}}" "$vol")
    if [[ $label == 1 ]]; then
      podman volume rm -f "$vol" >/dev/null
      asbx_log "$vol: removed"
    else
      asbx_log "$vol: not made by up.sh, left alone"
    fi
  fi
  podman container exists "$name" || rm -f "$ASBX_SEAT_STATE/containers/$name.id"
done
seat_prune_images
