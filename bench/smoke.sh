#!/usr/bin/env bash
# Every bench script in a short form (a run or two, small sizes), so a broken one fails the suite
# (ctest's bench_smoke). No figure is judged here: the figures come from the long forms, on a quiet
# machine, into docs/BENCHMARKS.md and docs/RESOURCES.md. A script in bench/ without a line below
# fails this too: a new benchmark gets its smoke form when it lands.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
bench=$ASBX_ROOT/bench

declare -A SMOKE=(
  [session.sh]="$bench/session.sh 1"
  [egress.py]="$bench/egress.py --runs 1 --build $ASBX_BUILD --request-kib 4 --response-kib 4 --events 50 --keepalive 2"
  [agents.py]="$bench/agents.py --runs 1 --build $ASBX_BUILD"
  [terminal.sh]="$bench/terminal.sh 1"
  [first_request.py]="$bench/first_request.py --runs 1 --warmup 0 --cli codex --build $ASBX_BUILD"
  [compare.sh]="$bench/compare.sh --runs 1 --warmup 0 --idle-seconds 1 --concurrency 4 --stream-mib 4"
  [hostile_output.py]="$bench/hostile_output.py --mib 8 --build $ASBX_BUILD"
  [tripwire.py]="$bench/tripwire.py --runs 1 --egress-runs 2 --build $ASBX_BUILD"
  [git_scan.sh]="$bench/git_scan.sh 2000 2"
  [inject.py]="$bench/inject.py --runs 1 --build $ASBX_BUILD --request-kib 4 --response-kib 4 --events 50"
  [seccomp.sh]="$bench/seccomp.sh 1 1000"
  [seccomp_recorder.sh]="$bench/seccomp_recorder.sh $ASBX_BUILD 1 1000"
  [levers.sh]="$bench/levers.sh --runs 1"
  [disk_watch.py]="$bench/disk_watch.py --build $ASBX_BUILD --runs 1 --seconds 1"
  [gvisor.sh]="env ASBX_BENCH_ROWS=start,git_status_1000,npm_install_local,codex_turn $bench/gvisor.sh 1 1000"
  [userns.sh]="$bench/userns.sh 1 1000"
  [sentry_log.sh]="env ASBX_BENCH_ROWS=start,refused_keyctl $bench/sentry_log.sh $ASBX_BUILD 1 1000"
  [warm_tail.sh]="$bench/warm_tail.sh --back-to-back $ASBX_BUILD 1"
  [session_cpu.sh]="$bench/session_cpu.sh 1 1"
)

failed=0
for script in "$bench"/*; do
  name=$(basename "$script")
  [[ $name == smoke.sh || ! -x $script ]] && continue
  if [[ -z ${SMOKE[$name]:-} ]]; then
    echo "bench/$name has no smoke form in bench/smoke.sh" >&2
    failed=1
    continue
  fi
  start=$SECONDS
  if out=$(${SMOKE[$name]} 2>&1); then
    printf 'ok    bench/%s (%ds)\n' "$name" $((SECONDS - start))
  else
    printf 'FAIL  bench/%s (%ds): %s\n%s\n' "$name" $((SECONDS - start)) "${SMOKE[$name]}" "$(tail -20 <<<"$out")"
    failed=1
  fi
done
exit $failed
