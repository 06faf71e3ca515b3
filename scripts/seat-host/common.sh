# Shared by the seat-host scripts. Source it after ../lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2034  # variables for the scripts that source this file
ASBX_SEAT_STATE=${ASBX_SEAT_STATE:-/var/lib/agent-sandbox/seats}
SEAT_KEY=$ASBX_SEAT_STATE/id_ed25519
SEAT_KNOWN_HOSTS=$ASBX_SEAT_STATE/known_hosts
SEAT_SSH_CONFIG=$ASBX_SEAT_STATE/ssh_config
SEAT_REGISTRY=$ASBX_SEAT_STATE/registry.toml
# Every container and volume the seat scripts create carries this label; down.sh removes only those.
SEAT_LABEL=io.agent-sandbox.seat

# True if container NAME was made by up.sh with this state dir: it carries the label and its Id is
# the one up.sh recorded (containers/NAME.id). Anything else is left alone.
seat_is_ours() {
  local name=$1 id label
  [[ -f $ASBX_SEAT_STATE/containers/$name.id ]] || return 1
  id=$(podman container inspect --format '{{.Id}}' "$name" 2>/dev/null) || return 1
  label=$(podman container inspect --format "{{index .Config.Labels \"$SEAT_LABEL\"}}" "$name")
  [[ $label == 1 && $id == "$(cat "$ASBX_SEAT_STATE/containers/$name.id")" ]]
}

# Loopback port published for a seat's sshd ("" if none).
seat_port() {
  podman port "$1" 22/tcp 2>/dev/null | head -n1 | sed -n 's/^127\.0\.0\.1:\([0-9]*\)$/\1/p'
}

# Options every ssh to a seat uses (strict host key checking against our known_hosts).
seat_ssh_opts() {
  SEAT_SSH_OPTS=(-F /dev/null -i "$SEAT_KEY" -o IdentitiesOnly=yes -o BatchMode=yes
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$SEAT_KNOWN_HOSTS"
    -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=5 -o LogLevel=ERROR)
}

# Shell snippet for a seat: ends podman's rootless pause process when no container runs, so the
# seat is back to "no pause process yet" (tests of the no-new-privileges failure need that).
SEAT_DROP_PAUSE='[ -n "$(podman ps -q 2>/dev/null)" ] || { p=$(cat "$XDG_RUNTIME_DIR/libpod/tmp/pause.pid" 2>/dev/null) && kill "$p"; } 2>/dev/null; true'

# Removes untagged seat images (left by build.sh while seats still ran them) that no container uses.
seat_prune_images() {
  local id
  for id in $(podman images --filter dangling=true --filter label=asbx.seat.key --format '{{.ID}}'); do
    podman rmi "$id" >/dev/null 2>&1 || true
  done
}
