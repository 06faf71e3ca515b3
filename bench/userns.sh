#!/usr/bin/env bash
# A rootful session in a user namespace of its own (user_namespace = "range": the launcher idmaps
# each bind before create and detaches it after init; docs/DECISIONS.md issue 34) next to the same
# session without one, and the podman CLI with the session's flags, side by side on the local seat
# (run scripts/setup.sh first).
#   bench/userns.sh [RUNS] [FILES]
# 1. `-- true` with a workspace (the binds idmapped: the workspace and its git dirs).
# 2. A walk of a FILES-file workspace (`find | wc`: stat through the idmapped mount).
# 3. `git status` in it (a clone of FILES files).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${1:-10}
files=${2:-5000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/ws" "$tmp/run"
ws=$tmp/ws/w
mkdir "$ws"
bench_files "$ws" "$files"
git -C "$ws" init -q && git -C "$ws" add -A && git -C "$ws" -c user.name=b -c user.email=b@b commit -qm files
chown -R 1000:1000 "$ws"
bench_seat_toml "$tmp/host" workspace_root="$tmp/ws" runtime_dir="$tmp/run" ledger="$tmp/ledger.jsonl" user_namespace=host
bench_seat_toml "$tmp/range" workspace_root="$tmp/ws" runtime_dir="$tmp/run" ledger="$tmp/ledger.jsonl" user_namespace=range
as() { printf 'env XDG_CONFIG_HOME=%s %s --workspace %s -- ' "$tmp/$1" "$ASBX_BUILD/agent-sandbox" "$ws"; }
cli="podman --url unix://$ASBX_SOCKET run --rm --network none --cap-drop=ALL --security-opt=no-new-privileges --user 1000:1000 -v $ws:/sandbox/workspaces/w -w /sandbox/workspaces/w $ASBX_IMAGE"
walk="sh -c 'find . | wc -l'"
status="git -c safe.directory=* status --short"
hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/h.json" \
  -n "true, range" "$(as range) true" -n "true, host" "$(as host) true" -n "true, podman run" "$cli true" \
  -n "walk, range" "$(as range) $walk" -n "walk, host" "$(as host) $walk" \
  -n "git status, range" "$(as range) $status" -n "git status, host" "$(as host) $status" >&2
jq -r '.results[] | "\(.command): mean \(.mean*1000|floor) ms, median \(.median*1000|floor) ms, stddev \((.stddev // 0)*1000|floor) ms"' "$tmp/h.json"
