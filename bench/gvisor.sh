#!/usr/bin/env bash
# runc vs runsc (gVisor) side by side in one run (docs/ISOLATION.md, docs/BENCHMARKS.md): each
# workload as a whole session through the launcher, `--isolation runc` and `--isolation gvisor`
# alternating under hyperfine. Prints a markdown table (median seconds, ratio) naming the platform.
#   bench/gvisor.sh [RUNS] [FILES]     (FILES: the checkout git status walks, default 20000)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${1:-5} files=${2:-20000}
t=$(mktemp -d /tmp/asbx-bench-gvisor-XXXXXX); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/ws/repo"
bench_seat_toml "$t/config" workspace_root="$t/ws" runtime_dir="$t/run" ledger="$t/ledger.jsonl" \
  runsc_dir="$ASBX_BUILD/libexec/agent-sandbox" runsc_socket="${ASBX_RUNSC_SOCKET:-$ASBX_RUN/podman-runsc.sock}"
export XDG_CONFIG_HOME=$t/config
ws=$t/ws/repo
git -C "$ws" init -q -b main
bench_files "$ws" "$files"
git -C "$ws" add -A && git -C "$ws" -c user.name=b -c user.email=b@b commit -q -m base
chown -R 1000:1000 "$ws"
platform=$(sed -n 's/.*--platform=\([a-z]*\).*/\1/p' "$ASBX_BUILD/libexec/agent-sandbox/runsc-ptrace")

declare -A work=(
  [start]="true"
  [fork_exec_300]="sh -c 'i=0; while [ \$i -lt 300 ]; do /bin/true; i=\$((i+1)); done'"
  [file_walk_usr]="sh -c 'find /usr -xdev >/dev/null'"
  [git_status_${files}]="git -C /sandbox/workspaces/repo status --porcelain"
)
if "$ASBX_BUILD/agent-sandbox" -- sh -c 'command -v npm' >/dev/null 2>&1; then
  work[npm_install_local]="sh -c 'cd /tmp && mkdir p && cd p && printf \"{\\\"name\\\":\\\"l\\\",\\\"version\\\":\\\"1.0.0\\\"}\" >package.json && npm pack -s >/dev/null && mkdir ../q && cd ../q && npm install --offline --no-audit --no-fund ../p/l-1.0.0.tgz >/dev/null'"
fi
echo "| workload | runc (s) | runsc $platform (s) | ratio |"
echo "|---|---|---|---|"
for name in start fork_exec_300 file_walk_usr "git_status_${files}" npm_install_local; do
  [[ -n ${work[$name]:-} ]] || continue
  flags="--workspace $ws"
  hyperfine -N --runs "$runs" --export-json "$t/$name.json" \
    -n runc "$ASBX_BUILD/agent-sandbox $flags --isolation runc -- ${work[$name]}" \
    -n runsc "$ASBX_BUILD/agent-sandbox $flags --isolation gvisor -- ${work[$name]}" >&2
  python3 - "$t/$name.json" "$name" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
print(f"| {sys.argv[2]} | {r['runc']:.2f} | {r['runsc']:.2f} | {r['runsc'] / r['runc']:.1f}× |")
PY
done
