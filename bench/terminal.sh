#!/usr/bin/env bash
# A --tty session warm, cold, and `podman run -it`, side by side (alternating): from the call to the
# agent's first instruction (its own `date +%s%N`), each call in a terminal of its own (script(1)).
# The warm seat keeps one member made with a terminal (pool_tty_size = 1) and each warm call waits,
# untimed, for it to be ready; the cold seat has no pool; both have compare.sh's limits and the CLI
# its flags (bench/lib.sh). Prints the median (min-max) of each and the ratios.
#
#   bench/terminal.sh [RUNS]     (default 10)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

runs=${1:-10}
[[ $runs =~ ^[1-9][0-9]*$ ]] || asbx_die "RUNS: '$runs' is not a positive whole number"
work=$(mktemp -d)
seat() {  # seat NAME MEMBERS_WITH_A_TERMINAL
  bench_seat_toml "$work/$1" ledger="$work/$1.jsonl" runtime_dir="$work/run-$1"
  sed -i "1i pool_tty_size = $2" "$work/$1/agent-sandbox/seat.toml"
  printf '[limits]\nmemory = "2g"\npids = 256\ncpus = 2.0\n' >>"$work/$1/agent-sandbox/seat.toml"
}
WARM="env XDG_CONFIG_HOME=$work/warm $ASBX_BUILD/agent-sandbox ${LIMITS[*]} --tty --"
COLD="env XDG_CONFIG_HOME=$work/cold $ASBX_BUILD/agent-sandbox ${LIMITS[*]} --tty --"
CLI="podman run -it ${PODMAN_FLAGS} $ASBX_IMAGE"
drain() {  # the pool off, then fills until no refill a session spawned is at work (at most 30 s)
  seat warm 0
  for _ in $(seq 1 150); do
    env XDG_CONFIG_HOME="$work/warm" "$ASBX_BUILD/agent-sandbox" pool fill 2>&1 | grep -q 'another fill' || break
    sleep 0.2
  done
  rm -rf "$work"
}
asbx_trap_exit drain
seat warm 1; seat cold 0
ready() { bench_ready_members "$work/run-warm"; }
wait_ready() {
  local until=$((SECONDS + 60))
  env XDG_CONFIG_HOME="$work/warm" "$ASBX_BUILD/agent-sandbox" pool fill >/dev/null 2>&1 || true
  while (($(ready) < 1 && SECONDS < until)); do sleep 0.05; done
  (($(ready) >= 1)) || asbx_die "no member made with a terminal was ready in 60 s"
}
first() {  # first CMD: ms from the call to the agent's clock, in a terminal of its own
  local s t
  s=$(date +%s%N)
  t=$(script -qec "$1 date +%s%N" /dev/null </dev/null | tr -cd '0-9\n' | grep -E '^[0-9]{19}$' | tail -1)
  [[ -n $t ]] || asbx_die "no clock came back from: $1"
  echo $(((t - s) / 1000000))
}
w=() c=() p=()
for _ in $(seq 1 "$runs"); do
  wait_ready; w+=("$(first "$WARM")")
  c+=("$(first "$COLD")")
  p+=("$(first "$CLI")")
done
stats() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { printf "%d ms (%d-%d)", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
grep -q '"path":"warm"' "$work/warm.jsonl" || asbx_die "no warm session in the warm seat's ledger"
printf 'call -> first instruction, --tty, median (min-max) of %d: warm %s, cold %s, podman run -it %s\n' \
  "$runs" "$(stats "${w[@]}")" "$(stats "${c[@]}")" "$(stats "${p[@]}")"
printf 'ratios: warm/cold %s, warm/CLI %s\n' "$(awk -v a="$(med "${w[@]}")" -v b="$(med "${c[@]}")" 'BEGIN { printf "%.2f", a / b }')" \
  "$(awk -v a="$(med "${w[@]}")" -v b="$(med "${p[@]}")" 'BEGIN { printf "%.2f", a / b }')"
