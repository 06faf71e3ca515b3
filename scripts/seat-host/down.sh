#!/usr/bin/env bash
# Removes agent-seat hosts made by up.sh: the containers and their storage volumes, plus their
# lines in known_hosts and ssh_config.d. Only containers/volumes carrying up.sh's label are touched.
# usage: down.sh [NAME...]     (no NAME: every seat up.sh made)
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/../lib.sh"
. "$here/common.sh"

if (($#)); then
  names=("$@")
else
  mapfile -t names < <(podman ps -a --filter "label=$SEAT_LABEL=1" --format '{{.Names}}' | sort)
fi

if [[ -d $ASBX_SEAT_STATE ]]; then
  exec 9>"$ASBX_SEAT_STATE/.lock"
  flock -w 120 9 || asbx_die "another up.sh/down.sh holds $ASBX_SEAT_STATE/.lock"
fi
for name in "${names[@]}"; do
  [[ -n $name ]] || continue
  if podman container exists "$name"; then
    label=$(podman container inspect --format "{{index .Config.Labels \"$SEAT_LABEL\"}}" "$name")
    if [[ $label != 1 ]]; then
      asbx_log "$name: not made by up.sh, left alone"
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
  rm -f "$ASBX_SEAT_STATE/ssh_config.d/$name.conf"
  vol=$name-storage
  if podman volume exists "$vol"; then
    label=$(podman volume inspect --format "{{index .Labels \"$SEAT_LABEL\"}}" "$vol")
    if [[ $label == 1 ]]; then
      podman volume rm -f "$vol" >/dev/null
      asbx_log "$vol: removed"
    else
      asbx_log "$vol: not made by up.sh, left alone"
    fi
  fi
done
seat_prune_images
