#!/usr/bin/env bash
# Checks that a seat booted by up.sh behaves like a production agent-seat host, over real ssh:
# lingering user, user bus, podman API socket, overlay storage, rootless `podman run`.
# usage: check.sh NAME [IMAGE]
#   IMAGE defaults to localhost/agent-sandbox:latest if the seat has it, else a busybox image that
#   check.sh makes on the seat from the VM's /bin/busybox (apt-get install busybox-static).
set -uo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/../lib.sh"
. "$here/common.sh"
(($#)) || { echo "usage: $0 NAME [IMAGE]" >&2; exit 2; }
name=$1
image=${2:-}
seat() { "$here/ssh.sh" "$name" "$@" </dev/null; }
pass=0 fail=0
expect() { # description, expected, actual
  if [[ $3 == "$2" ]]; then pass=$((pass + 1)); echo "ok   $1"
  else fail=$((fail + 1)); echo "FAIL $1: expected '$2', got '$3'"; fi
}

expect "Linger" "Linger=yes" "$(seat loginctl show-user seat -p Linger)"
expect "XDG_RUNTIME_DIR" "/run/user/1000" "$(seat 'echo $XDG_RUNTIME_DIR')"
expect "user bus is a socket" "yes" "$(seat 'test -S /run/user/1000/bus && echo yes')"
expect "NoNewPrivs in an ssh session" "0" "$(seat "awk '/^NoNewPrivs/ {print \$2}' /proc/self/status")"
expect "podman API _ping" "OK" "$(seat 'systemctl --user start podman.socket && curl -fsS --unix-socket /run/user/1000/podman/podman.sock http://d/_ping')"
# the API forwarded over ssh as a unix socket, as a launcher on another host would reach it
fwd=$(mktemp -u /tmp/asbx-seat-fwd.XXXXXX.sock)
ssh -F "$SEAT_SSH_CONFIG" -N -o ExitOnForwardFailure=yes -o StreamLocalBindUnlink=yes \
  -L "$fwd:/run/user/1000/podman/podman.sock" "$name" </dev/null &
fwd_pid=$!
for ((n = 0; n < 50; n++)); do [[ -S $fwd ]] && break; sleep 0.1; done
expect "podman API _ping over ssh -L" "OK" "$(curl -sS --max-time 10 --unix-socket "$fwd" http://d/_ping 2>&1)"
kill "$fwd_pid" 2>/dev/null; wait "$fwd_pid" 2>/dev/null; rm -f "$fwd"
expect "rootless storage driver" "overlay" "$(seat podman info --format '{{.Store.GraphDriverName}}')"

if [[ -z $image ]]; then
  if [[ $(seat "podman image exists $ASBX_IMAGE && echo yes") == yes ]]; then
    image=$ASBX_IMAGE
  else
    image=localhost/asbx-busybox:latest
    if [[ $(seat "podman image exists $image && echo yes") != yes ]]; then
      [[ -x /bin/busybox ]] || asbx_die "no /bin/busybox on the VM: apt-get install busybox-static"
      tmp=$(mktemp -d)
      mkdir -p "$tmp/bin"
      cp /bin/busybox "$tmp/bin/busybox"
      for a in sh id cat ls echo; do ln -s busybox "$tmp/bin/$a"; done
      tar --numeric-owner --owner=0 --group=0 -C "$tmp" -c . |
        "$here/ssh.sh" "$name" "podman import -q --change 'CMD [\"/bin/sh\"]' - $image" >/dev/null
      rm -rf "$tmp"
    fi
  fi
fi
out=$(seat podman run --rm --pull=never "$image" id 2>&1; echo "rc=$?")
echo "     podman run --rm $image id -> $(echo $out)"
expect "rootless podman run $image id" "uid= rc=0" "$(grep -o '^uid=' <<<"$out") $(tail -n1 <<<"$out")"
expect "rootless network (slirp4netns)" "ok" \
  "$(seat "podman run --rm --pull=never --network slirp4netns $image sh -c 'echo ok'")"
# Leave the seat as up.sh left it: no API service, no pause process.
seat "systemctl --user stop podman.socket podman.service; $SEAT_DROP_PAUSE"
echo "check $name: $pass passed, $fail failed"
((fail == 0))
