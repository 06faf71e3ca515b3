#!/usr/bin/env bash
# The cost of reading gVisor's refusals from the sentry's log (docs/DECISIONS.md, issue 36, "Refused
# calls under gVisor"): whole gVisor sessions of this build (the sentry logs into the launcher's
# FIFO) against BEFORE, a build without it (its sessions make no FIFO: the same wrapper leaves the
# log off), alternating under hyperfine in one run, on the local seat (scripts/setup.sh first).
#   bench/sentry_log.sh BEFORE_BUILD_DIR [RUNS] [FLOOD]
# Rows: `-- true`; a walk of /usr (every directory a gofer round trip the log records); 300
# fork+exec; FLOOD refused keyctl calls (each a log line). Prints one line per row: medians, ratio.
# ASBX_BENCH_ROWS="start refused_keyctl" (or start,refused_keyctl) runs only those rows (bench/smoke.sh does).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
before=${1:?usage: bench/sentry_log.sh BEFORE_BUILD_DIR [RUNS] [FLOOD]}
runs=${2:-5} flood=${3:-10000}
t=$(mktemp -d /tmp/asbx-bench-sentry-XXXXXX); trap 'rm -rf "$t"' EXIT
chmod 755 "$t"
mkdir -p "$t/ws/p"
bench_seat_toml "$t/config" workspace_root="$t/ws" runtime_dir="$t/run" ledger="$t/ledger.jsonl" \
  runsc_dir="$ASBX_BUILD/libexec/agent-sandbox" runsc_socket="${ASBX_RUNSC_SOCKET:-$ASBX_RUN/podman-runsc.sock}"
export XDG_CONFIG_HOME=$t/config
gcc -static -O1 -o "$t/ws/p/seccomp_probe" "$ASBX_ROOT/tests/integration/probes/seccomp_probe.c" -lpthread
chown -R 1000:1000 "$t/ws"

declare -A work=(
  [start]="true"
  [file_walk_usr]="sh -c 'find /usr -xdev >/dev/null'"
  [fork_exec_300]="sh -c 'i=0; while [ \$i -lt 300 ]; do /bin/true; i=\$((i+1)); done'"
  [refused_keyctl_$flood]="./seccomp_probe flood $flood"
)
rows=${ASBX_BENCH_ROWS:-start file_walk_usr fork_exec_300 refused_keyctl}
for row in ${rows//,/ }; do
  [[ $row == refused_keyctl ]] && row=refused_keyctl_$flood
  [[ -n ${work[$row]:-} ]] || { echo "bench/sentry_log.sh: no row $row" >&2; exit 2; }
  hyperfine --warmup 1 --runs "$runs" --export-json "$t/$row.json" \
    -n log "$ASBX_BUILD/agent-sandbox --isolation gvisor --workspace $t/ws/p -- ${work[$row]}" \
    -n before "$before/agent-sandbox --isolation gvisor --workspace $t/ws/p -- ${work[$row]}" >&2
  python3 - "$t/$row.json" "$row" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
print(f"| {sys.argv[2]} | {r['before']:.2f} | {r['log']:.2f} | {r['log'] / r['before']:.2f}× |")
PY
done
