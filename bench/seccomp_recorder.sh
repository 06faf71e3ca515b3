#!/usr/bin/env bash
# The seccomp recorder's cost (docs/DECISIONS.md, issue 34): whole sessions of this build (recorded
# rows notify the launcher) against BEFORE, a build without the recorder (the same rows as plain
# errnos), on the local seat (run scripts/setup.sh first).
#   bench/seccomp_recorder.sh BEFORE_BUILD_DIR [RUNS] [LOOP]
# 1. Session start to end: `-- true`.
# 2. A syscall-heavy loop of allowed calls in a session (LOOP getppid): they never reach the listener.
# 3. 10 000 refused calls (keyctl) in a session: each one a round trip through the recorder.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
before=${1:?usage: bench/seccomp_recorder.sh BEFORE_BUILD_DIR [RUNS] [LOOP]}
runs=${2:-5}
loop=${3:-3000000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/cfg/agent-sandbox" "$tmp/run" "$tmp/ws/p"
printf 'socket = "%s"\nimage = "%s"\nledger = "%s/ledger.jsonl"\nruntime_dir = "%s/run"\nworkspace_root = "%s/ws"\n' \
  "$ASBX_SOCKET" "$ASBX_IMAGE" "$tmp" "$tmp" "$tmp" >"$tmp/cfg/agent-sandbox/seat.toml"
gcc -static -O1 -o "$tmp/ws/p/seccomp_probe" "$ASBX_ROOT/tests/integration/probes/seccomp_probe.c" -lpthread
chown -R 1000:1000 "$tmp/ws"
export XDG_CONFIG_HOME=$tmp/cfg
session() { echo "$1/agent-sandbox --workspace $tmp/ws/p -- $2"; }
hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/h.json" \
  -n "true, recorder" "$(session "$ASBX_BUILD" true)" \
  -n "true, no recorder" "$(session "$before" true)" \
  -n "$loop getppid, recorder" "$(session "$ASBX_BUILD" "./seccomp_probe loop $loop")" \
  -n "$loop getppid, no recorder" "$(session "$before" "./seccomp_probe loop $loop")" \
  -n "10000 keyctl refused, recorder" "$(session "$ASBX_BUILD" "./seccomp_probe flood 10000")" \
  -n "10000 keyctl refused, no recorder" "$(session "$before" "./seccomp_probe flood 10000")" >&2
jq -r '.results[] | "\(.command): mean \(.mean*1000|floor) ms, median \(.median*1000|floor) ms, stddev \((.stddev // 0)*1000|floor) ms"' "$tmp/h.json"
