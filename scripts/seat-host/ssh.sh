#!/usr/bin/env bash
# Runs a command on an agent-seat host as user seat, with the key and known_hosts up.sh wrote
# (BatchMode, strict host key checking). Without a command: an interactive shell.
# usage: ssh.sh NAME [CMD...]      e.g. ssh.sh asbx-seat-1 podman info
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/../lib.sh"
. "$here/common.sh"

(($#)) || { echo "usage: $0 NAME [CMD...]" >&2; exit 2; }
name=$1
shift
p=$(seat_port "$name")
[[ -n $p ]] || asbx_die "$name is not a running seat with a loopback ssh port"
[[ -f $SEAT_KEY && -f $SEAT_KNOWN_HOSTS ]] || asbx_die "no key/known_hosts in $ASBX_SEAT_STATE (run up.sh)"
seat_ssh_opts
tty=()
(($#)) || tty=(-t)
[[ -t 0 ]] || tty=()
exec ssh "${SEAT_SSH_OPTS[@]}" "${tty[@]}" -p "$p" seat@127.0.0.1 "$@"
