#!/usr/bin/env bash
# The second README command: the whole suite (unit + integration against real podman,
# real seat hosts and the real agent CLIs). Installs and starts what it needs.
#   scripts/test.sh            everything
#   scripts/test.sh -R REGEX   only the ctest tests matching REGEX (e.g. -R unit)
#   scripts/test.sh --sanitize [ctest args]   the ASan+UBSan build's tests (scripts/sanitize.sh)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
sanitize=0
if [[ ${1:-} == --sanitize ]]; then sanitize=1; shift; fi
# Each step's wall time on stderr: the CI budget (a cold run under 45 min) is spent here and in ctest.
step() { local start=$SECONDS; "$@"; echo "[test.sh] ${1##*/}: $((SECONDS - start)) s" >&2; }
step "$ASBX_ROOT/scripts/setup.sh"
# What the seat-host preps need first, side by side: the .deb (a compile) and the seat image
# (debootstrap); both are reused by the preps below.
seat_prereqs() { "$ASBX_ROOT/scripts/seat-host/build.sh" >&2 & local pid=$!
  "$ASBX_ROOT/scripts/package.sh" >/dev/null || { wait "$pid"; asbx_die "scripts/package.sh failed (above)"; }
  wait "$pid" || asbx_die "scripts/seat-host/build.sh failed (above)"; }
# The fuzz targets' clang build (ctest's fuzz_smoke then only runs them) beside the preps, niced so
# they go first: it fills the cores while they wait on seats booting, ssh and image loads.
fuzz_pid=
if [[ $# -eq 0 && $sanitize -eq 0 ]]; then
  fuzz_log=$(mktemp)
  ASBX_FUZZ_BUILD=$ASBX_BUILD/fuzz setsid nice -n 10 "$ASBX_ROOT/scripts/fuzz.sh" --build-only >"$fuzz_log" 2>&1 & fuzz_pid=$!
  stop_fuzz_build() { [[ -z $fuzz_pid ]] || kill -- -"$fuzz_pid" 2>/dev/null; rm -f "$fuzz_log"; }  # a prep that failed
  asbx_trap_exit stop_fuzz_build
fi
# A failed build stops nothing else: fuzz_smoke builds again and fails with the compiler's words.
fuzz_build() {
  [[ -z $fuzz_pid ]] || wait "$fuzz_pid" || { tail -n 20 "$fuzz_log" >&2; asbx_log "the fuzz build failed (above); fuzz_smoke will say why"; }
  fuzz_pid=; }
step seat_prereqs
for prep in "$ASBX_ROOT"/scripts/test-prep.d/*.sh; do
  [ -e "$prep" ] && step "$prep"
done
step fuzz_build
export ASBX_MUST_WORK=${ASBX_MUST_WORK:-1}
[[ $sanitize -eq 0 ]] || exec "$ASBX_ROOT/scripts/sanitize.sh" "$@"
ctest --test-dir "$ASBX_BUILD" --output-on-failure --timeout 1500 "$@"
