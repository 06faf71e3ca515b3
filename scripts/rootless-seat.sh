#!/usr/bin/env bash
# A rootless seat on this machine for the tests: an unprivileged user with subuid/subgid
# ranges, overlay storage, the agent image in its storage, and its own podman API service
# (started detached, stopped by PID). This VM has cgroups v1, so rootless podman there
# ignores resource limits and says so: exactly what the limits_unenforced tests need.
#   rootless-seat.sh start|stop|status     prints the socket path on start
set -euo pipefail
. "$(dirname "$0")/lib.sh"
user=$ASBX_ROOTLESS_USER

ensure_user() {
  id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
  grep -q "^$user:" /etc/subuid || usermod --add-subuids 300000-365535 "$user"
  grep -q "^$user:" /etc/subgid || usermod --add-subgids 300000-365535 "$user"
  uid=$(id -u "$user"); home=$(getent passwd "$user" | cut -d: -f6)
  run=/run/user/$uid
  user_conf=$(asbx_user_containers_conf "$user")
  install -d -m 0700 -o "$user" -g "$user" "$run"
  asbx_podman_after_reboot "$run/libpod/tmp"
  # Debian ships no storage.conf: without this rootless podman silently uses vfs.
  install -d -o "$user" -g "$user" "$home/.config" "$home/.config/containers"
  [ -f "$home/.config/containers/storage.conf" ] ||
    printf '[storage]\ndriver = "overlay"\n' | install -m 0644 -o "$user" -g "$user" /dev/stdin \
      "$home/.config/containers/storage.conf"
}

as_user() {
  (cd / && runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
     PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$run" CONTAINERS_CONF="$user_conf" "$@")
}

socket() { echo "$run/podman/podman.sock"; }
pidfile() { echo "$ASBX_RUN/rootless-podman.pid"; }
alive() { asbx_pid_alive "$(pidfile)" >/dev/null; }
ping() { curl -fsS --max-time 2 --unix-socket "$(socket)" http://d/_ping >/dev/null 2>&1; }

start() {
  ensure_user
  "$ASBX_ROOT/scripts/build-image.sh" --rootless-user "$user" >&2
  mkdir -p "$ASBX_RUN"
  if ! (alive && ping); then
    install -d -m 0700 -o "$user" -g "$user" "$run/podman"
    # setpriv (not runuser) execs in place, so the recorded PID is podman's own.
    (cd "$run" && exec setsid setpriv --reuid="$uid" --regid="$(id -g "$user")" --init-groups \
       env -i HOME="$home" USER="$user" LOGNAME="$user" PATH=/usr/local/bin:/usr/bin:/bin \
       XDG_RUNTIME_DIR="$run" CONTAINERS_CONF="$user_conf" \
       podman system service --time=0 "unix://$(socket)") >>"$ASBX_RUN/rootless-podman.log" 2>&1 </dev/null &
    asbx_pid_record $! "$(pidfile)"
    for _ in $(seq 1 100); do ping && break; sleep 0.1; done
    ping || asbx_die "rootless podman service did not answer on $(socket) (see $ASBX_RUN/rootless-podman.log)"
  fi
  socket
}

stop() {
  local pid
  if pid=$(asbx_pid_alive "$(pidfile)"); then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$(pidfile)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) ensure_user >/dev/null; alive && ping && socket || { echo stopped; exit 1; } ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
