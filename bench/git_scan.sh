#!/usr/bin/env bash
# What the check after a session costs (launcher/gitguard/, docs/MOUNTS.md "After the agent"): a
# workspace that is a plain clone holding FILES files (default 1 000 000, 1000 per directory), one
# session `true`, its record's `git` phase and scan; next to `find WS -perm /6000 -type f` (what a
# person would run to find setuid files), hyperfine, warm cache.
#   bench/git_scan.sh [FILES] [RUNS]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
files=${1:-1000000} runs=${2:-3}
t=$(mktemp -d /tmp/asbx-bench-scan-XXXXXX); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/ws/repo"
bench_seat_toml "$t/config" workspace_root="$t/ws" runtime_dir="$t/run" ledger="$t/ledger.jsonl"
ws=$t/ws/repo
git -C "$ws" init -q -b main && git -C "$ws" -c user.name=b -c user.email=b@b commit -q --allow-empty -m base
bench_files "$ws" "$files"
[ "$(id -u)" = 0 ] && chown -R 1000:1000 "$ws"
export XDG_CONFIG_HOME=$t/config
for ((i = 0; i < runs; i++)); do
  "$ASBX_BUILD/agent-sandbox" --status-file "$t/s.json" --workspace "$ws" -- true
  jq -c '{git_phase_ms: .durations_ms.phases.git, total_ms: .durations_ms.total, scan: .git.scan}' "$t/s.json"
done
hyperfine --warmup 1 --runs "$runs" -n "find -perm /6000" "find $ws -perm /6000 -type f" >&2
