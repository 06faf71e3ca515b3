#!/usr/bin/env bash
# runc vs runsc (gVisor) side by side in one run (docs/ISOLATION.md, docs/BENCHMARKS.md): each
# workload as a whole session through the launcher, `--isolation runc` and `--isolation gvisor`
# alternating under hyperfine. Prints a markdown table (median seconds, ratio) naming the platform.
#   bench/gvisor.sh [RUNS] [FILES]     (FILES: the checkout git status walks, default 20000)
# ASBX_BENCH_ROWS="start codex_turn" (or start,codex_turn) runs only those rows.
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
# A real CLI turn against the mock model (tests/mock_model, in a namespace of its own): codex asks,
# the mock answers with one tool call (`true`), codex runs it and asks again, the mock says "done".
mkdir -p "$t/ws/cli" && git -C "$t/ws/cli" init -q -b main && touch "$t/ws/cli/README"
git -C "$t/ws/cli" add -A && git -C "$t/ws/cli" -c user.name=b -c user.email=b@b commit -q -m base && chown -R 1000:1000 "$t/ws/cli"
printf '{"auth_mode": "apikey", "OPENAI_API_KEY": "sk-mock-bench"}' >"$t/codex-auth.json" && chmod 600 "$t/codex-auth.json"
python3 - "$ASBX_ROOT/tests/mock_model" "$t" <<'PY' &
import os, pathlib, sys, time
sys.path.insert(0, sys.argv[1])
from netns_mock import MockInNetns
t = pathlib.Path(sys.argv[2])
with MockInNetns("asbx-bench-gvisor-%d" % os.getpid(), command="true", final="done", max_seconds=3600) as m:
    (t / "mock.part").write_text("%s %s\n" % (m.network, m.base_url))
    (t / "mock.part").rename(t / "mock")
    while t.exists() and not (t / "stop").exists():
        time.sleep(0.5)
PY
mock_pid=$!
trap 'touch "$t/stop"; wait "$mock_pid" 2>/dev/null; rm -rf "$t"' EXIT
for _ in $(seq 100); do [[ -e $t/mock ]] && break; sleep 0.1; done
read -r mock_net mock_url <"$t/mock"
provider="{name=\"Mock\",base_url=\"$mock_url/v1\",wire_api=\"responses\",requires_openai_auth=true,request_max_retries=0,stream_max_retries=0}"
work[codex_turn]="--runtime codex --credential $t/codex-auth.json --network $mock_net --workspace $t/ws/cli -- codex exec -c model=mock-model -c model_provider=mock -c model_providers.mock='$provider' -c analytics.enabled=false -c features.plugins=false --dangerously-bypass-approvals-and-sandbox 'Run true.'"

echo "| workload | runc (s) | runsc $platform (s) | ratio |"
echo "|---|---|---|---|"
rows=${ASBX_BENCH_ROWS:-start fork_exec_300 file_walk_usr git_status_$files npm_install_local codex_turn}
for name in ${rows//,/ }; do
  [[ -n ${work[$name]:-} ]] || continue
  cmd="--workspace $ws -- ${work[$name]}"
  [[ $name == codex_turn ]] && cmd=${work[$name]}  # its own flags, workspace and namespace
  hyperfine -N --runs "$runs" --export-json "$t/$name.json" \
    -n runc "$ASBX_BUILD/agent-sandbox --isolation runc $cmd" \
    -n runsc "$ASBX_BUILD/agent-sandbox --isolation gvisor $cmd" >&2
  python3 - "$t/$name.json" "$name" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
print(f"| {sys.argv[2]} | {r['runc']:.2f} | {r['runsc']:.2f} | {r['runsc'] / r['runc']:.1f}× |")
PY
done
