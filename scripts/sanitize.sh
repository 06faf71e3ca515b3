#!/usr/bin/env bash
# An ASan + UBSan build in its own dir (build-sanitize/) and its tests: by default the unit tests
# and the local integration tests, or the ctest arguments given. Any sanitizer report is fatal:
# reports go to files (a test expecting a non-zero exit cannot hide one) and fail the run.
# Needs the environment scripts/test.sh prepares; `scripts/test.sh --sanitize` does both.
#   scripts/sanitize.sh [ctest args]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${ASBX_SANITIZE_BUILD:-$ASBX_ROOT/build-sanitize}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ASBX_ROOT" -B "$build" -G Ninja -DASBX_SANITIZE=ON "${launcher[@]}" >/dev/null
ninja -C "$build" -j"${ASBX_JOBS:-2}" >&2

# World-writable like /tmp: tests may run the launcher as another user.
reports=$(mktemp -d /tmp/asbx-sanitizer.XXXXXX)
chmod 1777 "$reports"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:log_path=$reports/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
args=("$@")
[[ ${#args[@]} -gt 0 ]] ||
  args=(-R '^(unit|test_foundation|test_lifecycle|test_credentials|test_mounts|test_callers|test_faults_local|test_hostile.*)$')
rc=0
ctest --test-dir "$build" --output-on-failure --timeout 1500 "${args[@]}" || rc=$?
if compgen -G "$reports/*" >/dev/null; then
  asbx_log "sanitizer reports (fatal):"
  for f in "$reports"/*; do echo "== $f"; cat "$f"; done >&2
  rc=1
fi
rm -rf "$reports"
exit "$rc"
