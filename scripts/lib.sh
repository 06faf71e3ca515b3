# Shared settings for the project's scripts. Source it; it defines names only.
# shellcheck shell=bash
ASBX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Build directory (tests and demo use the executables from here).
ASBX_BUILD=${ASBX_BUILD:-$ASBX_ROOT/build}
# Machine-wide cache shared by every clone (debootstrap trees, npm downloads).
ASBX_CACHE=${ASBX_CACHE:-/var/cache/agent-sandbox}
# Runtime state of the rootful harness service (socket, pid file, logs).
ASBX_RUN=${ASBX_RUN:-/run/agent-sandbox}
ASBX_SOCKET=$ASBX_RUN/podman.sock
# containers.conf for every podman this project starts (runc: crun refuses hybrid cgroups here).
export CONTAINERS_CONF=$ASBX_ROOT/scripts/containers.conf
# Image names (override to build a variant beside the shared tags).
ASBX_BASE_IMAGE=${ASBX_BASE_IMAGE:-localhost/agent-sandbox-base:bookworm}
ASBX_TOOLCHAINS_IMAGE=${ASBX_TOOLCHAINS_IMAGE:-localhost/agent-sandbox-toolchains:bookworm}
ASBX_IMAGE=${ASBX_IMAGE:-localhost/agent-sandbox:latest}
ASBX_SEAT_IMAGE=${ASBX_SEAT_IMAGE:-localhost/agent-sandbox-seat:bookworm}  # another tag: a private seat image
# The unprivileged user used for rootless runs on this machine.
ASBX_ROOTLESS_USER=asbx-rootless

asbx_log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
asbx_die() { asbx_log "error: $*"; exit 1; }

# Drop a temporary image tag; remove the image too unless it already carries the final name.
asbx_drop_temp_tag() {
  local tmp_tag=$1 final=$2 id
  [[ -n $tmp_tag ]] || return 0
  id=$(podman image inspect --format '{{.Id}}' "$tmp_tag" 2>/dev/null) || return 0
  podman untag "$id" "$tmp_tag" >/dev/null 2>&1 || true
  [[ $(podman image inspect --format '{{.Id}}' "$final" 2>/dev/null) == "$id" ]] ||
    podman rmi "$id" >/dev/null 2>&1 || true
}

# The project's containers.conf, copied where USER's podman can read it (the clone itself may
# sit in a directory other users cannot traverse). Prints the copy's path.
asbx_user_containers_conf() {
  local user=$1 home
  home=$(getent passwd "$user" | cut -d: -f6)
  install -d -o "$user" -g "$user" "$home/.config" "$home/.config/containers"
  install -m 0644 -o "$user" -g "$user" "$CONTAINERS_CONF" "$home/.config/containers/asbx-containers.conf"
  echo "$home/.config/containers/asbx-containers.conf"
}

# Exit trap for scripts that make temporary things: asbx_trap_exit [HOOK]. On exit it runs HOOK
# (a cleanup function of the script) and logs a failure's exit code. INT and TERM exit 130, so
# the trap runs on them too.
asbx_trap_exit() {
  asbx_exit_hook=${1:-}
  trap asbx_on_exit EXIT
  trap 'exit 130' INT TERM
}
asbx_on_exit() {
  local rc=$?
  [[ -z $asbx_exit_hook ]] || "$asbx_exit_hook"
  [[ $rc -eq 0 ]] || asbx_log "failed (exit $rc)"
}

# asbx_rm_tmp_dir DIR: remove a temporary directory, if DIR is set and exists.
asbx_rm_tmp_dir() {
  [[ -z $1 || ! -d $1 ]] || rm -rf --one-file-system "$1"
}
