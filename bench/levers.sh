#!/usr/bin/env bash
# Each create-body lever of issue 37 measured alone: podman's whole lifecycle of one container
# (create → init → start → wait → delete, the launcher's sequence without the launcher) through the
# REST API with curl, for the launcher's own create body and that body without each lever.
# hyperfine alternates the variants in one run; medians to stdout as a markdown table.
#
#   bench/levers.sh [--runs N]
#
# Needs ./scripts/demo.sh (the local seat) and a build (the body is `agent-sandbox --dry-run`'s).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [[ ${1:-} == --one ]]; then  # --one BODY_FILE: one container's lifecycle (what hyperfine runs)
  api() { curl -sf --unix-socket "$ASBX_SOCKET" -X "$1" "http://d/v4.3.1/libpod$2" "${@:3}"; }
  name=asbx-bench-lever-$$-$RANDOM
  id=$(jq --arg n "$name" '.name = $n' "$2" | api POST /containers/create -H 'Content-Type: application/json' -d @- | jq -r .Id)
  api POST "/containers/$id/init" >/dev/null
  api POST "/containers/$id/start" >/dev/null
  api POST "/containers/$id/wait?condition=stopped&condition=exited&interval=10ms" >/dev/null
  api DELETE "/containers/$id?force=true&volumes=true" >/dev/null
  exit 0
fi

runs=10
while (($#)); do
  case $1 in
    --runs) runs=${2:?}; shift 2 ;;
    *) asbx_usage ;;
  esac
done

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# The body as a host seat renders it: a range body names seat tmpfs and stagings only a launch makes.
bench_seat_toml "$work" ledger="$work/ledger.jsonl" runtime_dir="$work/run" tripwire=off user_namespace=host
# The dry run names the session's profile file without writing it: this one is written here.
XDG_CONFIG_HOME=$work "$ASBX_BUILD/agent-sandbox" seccomp-profile >"$work/seccomp.json" 2>/dev/null
XDG_CONFIG_HOME=$work "$ASBX_BUILD/agent-sandbox" --dry-run --memory 2g --pids 256 --cpus 2 -- true |
  jq --arg seccomp "$work/seccomp.json" '.create_body | .labels = {"agent-sandbox.bench": "levers"} | .volatile = true | .cgroups_mode = "no-conmon" | .seccomp_profile_path = $seccomp' \
  >"$work/all.json"  # not a session (gc leaves it); both levers, whichever build rendered it
jq 'del(.volatile, .cgroups_mode)' "$work/all.json" >"$work/none.json"
jq 'del(.cgroups_mode)' "$work/all.json" >"$work/volatile.json"
jq 'del(.volatile)' "$work/all.json" >"$work/no-conmon.json"
self=$(realpath "$0")
variants=(none volatile no-conmon all)
args=()
for v in "${variants[@]}"; do args+=(-n "$v" "bash $self --one $work/$v.json"); done
hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/h.json" "${args[@]}" >&2
base=$(jq -r '.results[0].median' "$work/h.json")
echo "machine: $(nproc) cores, podman $(podman --version | awk '{print $3}'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: bench/levers.sh --runs $runs"
echo
echo "| create body | median | mean ± sd | vs none |"
echo "|---|---:|---:|---:|"
jq -r --argjson b "$base" '.results[] |
  "| \(.command) | \(.median * 1000 | floor) ms | \(.mean * 1000 | floor) ± \((.stddev // 0) * 1000 | floor) ms | \(.median / $b * 100 | floor / 100)× |"' \
  "$work/h.json"
