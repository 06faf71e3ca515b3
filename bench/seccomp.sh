#!/usr/bin/env bash
# The project's seccomp profile (seccomp/table.h) next to podman's installed default, on the local
# seat (run scripts/setup.sh first). Both sides are `podman run` with the session's flags, so the
# only difference is the profile.
#   bench/seccomp.sh [RUNS] [LOOP]
# 1. Start to end of a container running `true`.
# 2. A syscall-heavy loop inside: LOOP allowed calls (getppid), the filter's cost per call.
# 3. fork+exec: 300 `/bin/true` from a shell (clone, execve, wait: the calls the table checks args of).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${1:-10}
loop=${2:-5000000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/run"
bench_seat_toml "$tmp/cfg" ledger="$tmp/ledger.jsonl" runtime_dir="$tmp/run"
# The sessions' profile as this seat renders it, and the probe, built static.
profile=$tmp/profile.json
"$ASBX_BUILD/agent-sandbox" seccomp-profile >"$profile" 2>/dev/null
chmod 644 "$profile"
gcc -static -O1 -o "$tmp/seccomp_probe" "$ASBX_ROOT/tests/integration/probes/seccomp_probe.c" -lpthread
run="podman --url unix://$ASBX_SOCKET run --rm --network none --cap-drop=ALL --security-opt=no-new-privileges --user 1000:1000 -e AGENT_SANDBOX_SESSION=bench -v $tmp:/b:ro"
hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/h.json" \
  -n "true, project profile" "$run --security-opt seccomp=$profile $ASBX_IMAGE true" \
  -n "true, podman default" "$run $ASBX_IMAGE true" \
  -n "$loop getppid, project profile" "$run --security-opt seccomp=$profile $ASBX_IMAGE /b/seccomp_probe loop $loop" \
  -n "$loop getppid, podman default" "$run $ASBX_IMAGE /b/seccomp_probe loop $loop" \
  -n "300 fork+exec, project profile" "$run --security-opt seccomp=$profile $ASBX_IMAGE bash -c 'for i in {1..300}; do /bin/true; done'" \
  -n "300 fork+exec, podman default" "$run $ASBX_IMAGE bash -c 'for i in {1..300}; do /bin/true; done'" >&2
jq -r '.results[] | "\(.command): mean \(.mean*1000|floor) ms, median \(.median*1000|floor) ms, stddev \((.stddev // 0)*1000|floor) ms"' "$tmp/h.json"
echo "profile: $profile ($(jq '.syscalls | length' "$profile") entries; default: $(jq '.syscalls | length' /usr/share/containers/seccomp.json))"
