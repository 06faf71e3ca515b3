#!/usr/bin/env bash
# What one session costs the machine, everything included: the launcher, its refill and remover,
# podman's service, conmon, runc, podman's `container cleanup` — the machine's busy time over N
# sessions and SETTLE_S after the last, less what the machine does idle in as long, per session. Warm
# (1.5 s between calls, for the refill: the ledger says how many went warm), cold (the pool off),
# and the podman CLI with the same flags, each back to back.
#   bench/session_cpu.sh [N] [SETTLE_S]   (SETTLE_S: the wait after the last session, 5 s; idle is sampled 2x as long)
# Needs ./scripts/demo.sh (the local seat). Run it on a quiet machine: other work counts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
n=${1:-10} settle=${2:-5}
[[ $n =~ ^[1-9][0-9]*$ ]] || asbx_die "N: '$n' is not a positive whole number"
[[ $settle =~ ^[1-9][0-9]*$ ]] || asbx_die "SETTLE_S: '$settle' is not a positive whole number of seconds"
work=$(mktemp -d)
bench_seat_toml "$work" ledger="$work/ledger.jsonl" runtime_dir="$work/run"
printf '[limits]\nmemory = "2g"\npids = 256\ncpus = 2.0\n' >>"$work/agent-sandbox/seat.toml"
export XDG_CONFIG_HOME=$work
A=$ASBX_BUILD/agent-sandbox
pool() {  # pool N: the seat's pool_size, then a fill (0: drained, again while a refill holds the lock)
  sed -i '/^pool_size/d' "$work/agent-sandbox/seat.toml"
  (($1 > 0)) && sed -i "1i pool_size = $1" "$work/agent-sandbox/seat.toml"
  for _ in $(seq 1 150); do "$A" pool fill 2>&1 | grep -q 'another fill' || break; sleep 0.2; done
}
trap 'sleep 3; pool 0; "$A" gc >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }  # ticks: user nice system irq softirq
hz=$(getconf CLK_TCK)
svc_pid=$(asbx_pid_alive "$ASBX_RUN/podman.pid") || asbx_die "the podman service is not running (scripts/podman-service.sh start)"
svc() { awk '{ print $14 + $15 }' "/proc/$svc_pid/stat"; }  # the service's own ticks
b0=$(busy); sleep $((2 * settle)); idle=$(($(busy) - b0))  # ticks in 2 * settle s
per() {  # per NAME PAUSE CMD...: N runs, PAUSE s before each, then SETTLE_S: CPU ms a session, wall ms a call
  local name=$1 pause=$2 b v s e t=0 c0 c1; shift 2
  b=$(busy); v=$(svc); s=$(date +%s%N)
  for ((i = 0; i < n; i++)); do
    sleep "$pause"; c0=$(date +%s%N); "$@" >/dev/null 2>&1; c1=$(date +%s%N); t=$((t + c1 - c0))
  done
  sleep "$settle"; e=$(date +%s%N)
  echo "$name: $(( ($(busy) - b - idle * (e - s) / (2 * settle * 1000000000)) * 1000 / hz / n )) ms CPU per session (podman's service $((($(svc) - v) * 1000 / hz / n)) ms), $((t / 1000000 / n)) ms a call"
}
pool 2; sleep 3
per "warm (its refill and removal included)" 1.5 "$A" "${LIMITS[@]}" -- true
echo "  of them warm: $(grep -c '"path":"warm"' "$work/ledger.jsonl") of $n"
pool 0
per "cold" 0 "$A" "${LIMITS[@]}" -- true
# shellcheck disable=SC2086
per "podman run CLI" 0 podman run $PODMAN_FLAGS "$ASBX_IMAGE" true
echo "(the machine idle: $((idle * 1000 / hz / (2 * settle))) ms CPU a second, subtracted)"
