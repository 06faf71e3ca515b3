#!/usr/bin/env bash
# A warm `-- true` on a quiet seat: this build against BEFORE (another build, e.g. main's), and the
# podman CLI with the same flags, alternating (hyperfine), each call after a 2 s pause so the last
# call's refill and remover are done (docs/BENCHMARKS.md "The tail of a warm session").
# --back-to-back: no pause, only the wait (untimed) for a ready member, as bench/compare.sh's
# back-to-back warm row: each call meets the last one's removal and container cleanup.
#   bench/warm_tail.sh [--back-to-back] BEFORE_BUILD_DIR [RUNS]
# Needs ./scripts/demo.sh (the local seat).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pause='sleep 2'
[[ ${1:-} == --back-to-back ]] && { pause=; shift; }
before=${1:?usage: bench/warm_tail.sh [--back-to-back] BEFORE_BUILD_DIR [RUNS]}
runs=${2:-10}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bench_seat_toml "$work" ledger="$work/ledger.jsonl" runtime_dir="$work/run"
sed -i '1i pool_size = 2' "$work/agent-sandbox/seat.toml"
# the seat's limits are the rows' (LIMITS): a claim applies no other (as bench/compare.sh's warm seat)
printf '[limits]\nmemory = "2g"\npids = 256\ncpus = 2.0\n' >>"$work/agent-sandbox/seat.toml"
export XDG_CONFIG_HOME=$work
drain() {
  sleep 3  # the last call's refill is done: a member made after the drain would outlive this seat
  sed -i '/^pool_size/d' "$work/agent-sandbox/seat.toml"
  "$ASBX_BUILD/agent-sandbox" pool fill 2>/dev/null || true
  "$ASBX_BUILD/agent-sandbox" gc 2>/dev/null || true
}
trap 'drain; rm -rf "$work"' EXIT
"$ASBX_BUILD/agent-sandbox" pool fill 2>/dev/null
# before each call: a member ready (a ready file no claim names), at most 60 s
ready="u=\$((SECONDS + 60)); while ((\$(. '$ASBX_ROOT/bench/lib.sh'; bench_ready_members '$work/run') < 1 && SECONDS < u)); do sleep 0.02; done"
hyperfine -N --warmup 1 --runs "$runs" --prepare "bash -c \"${pause:+$pause; }$ready\"" --export-json "$work/h.json" \
  -n "warm -- true, this build" "$ASBX_BUILD/agent-sandbox ${LIMITS[*]} -- true" \
  -n "warm -- true, before" "$before/agent-sandbox ${LIMITS[*]} -- true" \
  -n "podman run CLI" "podman run $PODMAN_FLAGS $ASBX_IMAGE true" >&2
jq -r '.results[] | "\(.command): median \(.median*1000|floor) ms, mean \(.mean*1000|floor) ms, stddev \((.stddev // 0)*1000|floor) ms"' "$work/h.json"
jq -r '"ratio this build / CLI: \(.results[0].median / .results[2].median * 100 | floor / 100); before / CLI: \(.results[1].median / .results[2].median * 100 | floor / 100)"' "$work/h.json"
