#!/usr/bin/env bash
# Builds every libFuzzer target in fuzz/ (clang; ASan + UBSan, undefined behaviour fatal) in its
# own build dir and runs each for SECONDS (default 10), one process, on a work corpus kept in
# the build dir plus the seeds in fuzz/corpus/NAME/ (never written). Prints one line per target
# with its execution count; exits 1 when any target crashed, leaked or hung (the reproducer's
# path is printed; turn it into a unit test in tests/unit).
#   scripts/fuzz.sh [SECONDS]
#   scripts/fuzz.sh --build-only                          only the build (scripts/test.sh runs it beside the seat preps)
#   ASBX_FUZZ_ONLY="quote frames" scripts/fuzz.sh 60     only these targets
#   ASBX_FUZZ_BUILD=DIR                                    build dir (default build-fuzz/)
#   ASBX_FUZZ_RUNS=10000000 scripts/fuzz.sh 7200          each stops at N executions (or SECONDS)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_only=0
if [[ ${1:-} == --build-only ]]; then build_only=1; shift; fi
seconds=${1:-10}
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || asbx_die "usage: scripts/fuzz.sh [SECONDS]"
runs=${ASBX_FUZZ_RUNS:-}
[[ -z $runs || $runs =~ ^[1-9][0-9]*$ ]] || asbx_die "ASBX_FUZZ_RUNS must be a positive count, not '$runs'"
build=${ASBX_FUZZ_BUILD:-$ASBX_ROOT/build-fuzz}
command -v clang++ >/dev/null || asbx_die "clang++ is missing (scripts/setup.sh installs clang)"

configure_and_build() {
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$ASBX_ROOT" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DASBX_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
  ninja -C "$build" -j"${ASBX_JOBS:-2}" fuzz-targets >&2
}

targets() {
  if [[ -n ${ASBX_FUZZ_ONLY:-} ]]; then printf '%s\n' $ASBX_FUZZ_ONLY; return; fi
  for src in "$ASBX_ROOT"/fuzz/*.cc; do basename "$src" .cc; done
}

# Runs one target; prints its line; returns non-zero when libFuzzer found something.
run_target() {
  local name=$1 work=$build/corpus/$1 log=$build/logs/$1.log rc=0 TIMEFORMAT='%U %S' limit=() start=$SECONDS
  [[ -z $runs ]] || limit=(-runs="$runs")
  mkdir -p "$work" "$build/logs" "$build/crashes"
  # CPU seconds next to wall seconds: on a shared machine execs per CPU second is the figure.
  { time "$build/fuzz_$name" -max_total_time="$seconds" -timeout=25 -print_final_stats=1 "${limit[@]}" \
      -artifact_prefix="$build/crashes/$name-" "$work" "$ASBX_ROOT/fuzz/corpus/$name" >"$log" 2>&1; } \
    2>"$build/logs/$name.cpu" || rc=$?
  local execs cov cpu
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1 | cut -d' ' -f2)
  cpu=$(awk '{printf "%.1f", $1 + $2}' "$build/logs/$name.cpu")
  if [[ $rc -eq 0 ]]; then
    printf '%-16s %12s execs in %ss (cpu %ss)  cov %s  corpus %s  ok\n' "$name" "${execs:-?}" "$((SECONDS - start))" "$cpu" \
      "${cov:-?}" "$(find "$work" -type f | wc -l)"
  else
    printf '%-16s %12s execs  FAILED (exit %s): %s\n' "$name" "${execs:-?}" "$rc" \
      "$(grep -o "$build/crashes/$name-[^ ]*" "$log" | tail -n1)"
    grep -m1 -E 'ERROR: |property violated|runtime error' "$log" >&2 || tail -n 20 "$log" >&2
  fi
  return "$rc"
}

configure_and_build
((build_only)) && exit 0
failed=0
for name in $(targets); do
  [[ -x $build/fuzz_$name ]] || asbx_die "no fuzz target '$name' (fuzz/$name.cc)"
  run_target "$name" || failed=1
done
exit "$failed"
