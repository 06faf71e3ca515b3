#!/usr/bin/env bash
# Session overhead and launcher memory on the local seat (run scripts/setup.sh first).
#   bench/session.sh [RUNS]
# 1. `agent-sandbox -- true` next to `podman run --rm --network none IMAGE true` against the same service.
# 2. The launcher's peak RSS while 256 MiB stream through stdout (streaming, never buffered).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${1:-10}
cfg=$(mktemp -d); trap 'rm -rf "$cfg"' EXIT
bench_seat_toml "$cfg" ledger="$cfg/ledger.jsonl"
export XDG_CONFIG_HOME=$cfg
hyperfine --warmup 2 --runs "$runs" --export-json "$cfg/h.json" \
  -n agent-sandbox "$ASBX_BUILD/agent-sandbox -- true" \
  -n "podman run --rm" "podman --url unix://$ASBX_SOCKET run --rm --network none $ASBX_IMAGE true" >&2
jq -r '.results[] | "\(.command): mean \(.mean*1000|floor) ms, stddev \((.stddev // 0)*1000|floor) ms, min \(.min*1000|floor) ms"' "$cfg/h.json"
rss=$( { /usr/bin/time -f '%M' "$ASBX_BUILD/agent-sandbox" -- bash -c 'yes 0123456789abcdef | head -c 268435456' \
         >/dev/null; } 2>&1 | tail -1)
echo "launcher peak RSS streaming 256 MiB: ${rss} KiB"
