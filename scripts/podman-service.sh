#!/usr/bin/env bash
# Start/stop the rootful podman API service the local seat and the tests talk to.
# usage: podman-service.sh start|stop|status
# The service runs detached, on a project-owned socket, with the project's containers.conf;
# it is stopped by the PID this script recorded, never by name.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pidfile=$ASBX_RUN/podman.pid

alive() { asbx_pid_alive "$pidfile" >/dev/null; }
ping() { curl -fsS --max-time 2 --unix-socket "$ASBX_SOCKET" http://d/_ping >/dev/null 2>&1; }

# The service runs with a copy of the project's containers.conf at a stable path: podman hands
# CONTAINERS_CONF on to every `podman container cleanup` conmon runs, for the service's whole
# life, and a clone that is deleted meanwhile would leave every exit unprocessed.
conf=$ASBX_RUN/containers.conf

# The service's conf: the project's, plus the gVisor wrappers where runsc is installed, so that a
# stop or removal sent here for a gVisor session's container (a user's `podman rm -f`, an older
# launcher's gc) reaches runsc instead of leaving the sandbox running (docs/THREATS.md).
runsc_dir() { local d=/usr/libexec/agent-sandbox; [[ -x $d/runsc-ptrace ]] || d=$ASBX_BUILD/libexec/agent-sandbox; echo "$d"; }
service_conf() {
  cat "$CONTAINERS_CONF"
  [[ -x /usr/bin/runsc ]] || return 0
  local dir; dir=$(runsc_dir)
  printf '\n[engine.runtimes]\nrunsc-ptrace = ["%s/runsc-ptrace"]\nrunsc-kvm = ["%s/runsc-kvm"]\n' "$dir" "$dir"
}

start() {
  mkdir -p "$ASBX_RUN"
  local changed=0 want
  want=$(mktemp "$ASBX_RUN/.conf.XXXXXX")
  service_conf >"$want"
  if cmp -s "$want" "$conf"; then rm -f "$want"; else chmod 0644 "$want"; mv -f "$want" "$conf"; changed=1; fi
  if ((changed == 0)) && alive && ping; then return 0; fi
  stop
  # cwd matters: conmon drops its oom marker there (podman 4.3). exec all the way down, so
  # the recorded PID is podman's own and `stop` ends the service itself.
  (cd "$ASBX_RUN" && CONTAINERS_CONF=$conf exec setsid podman system service --time=0 "unix://$ASBX_SOCKET") \
     >>"$ASBX_RUN/podman.log" 2>&1 </dev/null &
  asbx_pid_record $! "$pidfile"
  for _ in $(seq 1 100); do ping && { chmod 0660 "$ASBX_SOCKET"; return 0; }; sleep 0.1; done
  asbx_die "podman service did not answer on $ASBX_SOCKET (see $ASBX_RUN/podman.log)"
}

stop() {
  local pid
  if pid=$(asbx_pid_alive "$pidfile"); then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$pidfile" "$ASBX_SOCKET"
}

# The second service, whose runtime is runsc (gVisor sessions; docs/ISOLATION.md): podman 4.3
# chooses the runtime per service. Its wrappers are the build tree's unless the package's exist.
runsc_pidfile=$ASBX_RUN/podman-runsc.pid runsc_socket=$ASBX_RUN/podman-runsc.sock
runsc_start() {
  [[ -x /usr/bin/runsc ]] || return 0
  local dir; dir=$(runsc_dir)
  sed "s|/usr/libexec/agent-sandbox|$dir|" "$ASBX_ROOT/scripts/containers-runsc.conf" >"$ASBX_RUN/containers-runsc.conf"
  runsc_stop
  (cd "$ASBX_RUN" && CONTAINERS_CONF=$ASBX_RUN/containers-runsc.conf exec setsid podman system service --time=0 \
     "unix://$runsc_socket") >>"$ASBX_RUN/podman-runsc.log" 2>&1 </dev/null &
  asbx_pid_record $! "$runsc_pidfile"
  for _ in $(seq 1 100); do
    curl -fsS --max-time 2 --unix-socket "$runsc_socket" http://d/_ping >/dev/null 2>&1 && { chmod 0660 "$runsc_socket"; return 0; }
    sleep 0.1
  done
  asbx_die "the runsc podman service did not answer on $runsc_socket (see $ASBX_RUN/podman-runsc.log)"
}
runsc_stop() {
  local pid
  if pid=$(asbx_pid_alive "$runsc_pidfile"); then kill "$pid"; sleep 0.5; fi
  rm -f "$runsc_pidfile" "$runsc_socket"
}

case "${1:-}" in
  start) start; runsc_start ;;
  stop) stop; runsc_stop ;;
  status) alive && ping && echo "running pid $(asbx_pid_alive "$pidfile") socket $ASBX_SOCKET" || { echo stopped; exit 1; } ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
