#!/usr/bin/env bash
# Every speed and memory target of the launcher, side by side with the tool a user would pick
# instead, in one run (hyperfine, alternating runs). Writes a markdown table to stdout; progress
# and hyperfine's own output go to stderr.
#
#   bench/compare.sh [--runs N] [--warmup N] [--idle-seconds S] [--concurrency C] [--no-remote]
#                    [--registry FILE] [--stream-mib M] [--json FILE] [--before BUILD]
#
# --warmup N: hyperfine's untimed runs before each row (default 2; bench/smoke.sh gives 0).
# --idle-seconds S: how long the idle pool of C is sampled (default 10).
# --concurrency C: the sessions and the claims started at once, and the pool sampled (default 16).
# --before BUILD adds a row: this build's `-- true` against another build's (e.g. main's), alternating.
#
# Needs ./scripts/demo.sh (the local seat). The remote rows need the seat hosts of the remote tests
# (scripts/test-prep.d/40-remote-seats.sh boots rd-1 and rd-2; its registry is the default, the
# first seat of it is used); --no-remote leaves them out.
# Same containment on both sides: caps dropped, no-new-privileges, read-only root, init, network
# none, uid 1000, the same memory/swap/pids/cpu limits and nofile/nproc rlimits, the same tmpfs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

runs=10 warmup=2 idle_s=10 conc=16 remote=1 stream_mib=1024 json_out= before=
state=${ASBX_SEAT_STATE:-/var/lib/agent-sandbox/seats}
registry=$state/registry-rd.toml
while (($#)); do
  case $1 in
    --runs) runs=${2:?}; shift 2 ;;
    --warmup) warmup=${2:?}; shift 2 ;;
    --idle-seconds) idle_s=${2:?}; shift 2 ;;
    --concurrency) conc=${2:?}; shift 2 ;;
    --no-remote) remote=0; shift ;;
    --registry) registry=${2:?}; shift 2 ;;
    --stream-mib) stream_mib=${2:?}; shift 2 ;;
    --json) json_out=${2:?}; shift 2 ;;
    --before) before=${2:?}; shift 2 ;;
    *) asbx_usage ;;
  esac
done
[[ $warmup =~ ^[0-9]+$ ]] || asbx_die "--warmup: '$warmup' is not a count (0 or more)"
[[ $idle_s =~ ^[1-9][0-9]*$ ]] || asbx_die "--idle-seconds: '$idle_s' is not a positive whole number"
[[ $conc =~ ^[1-9][0-9]*$ ]] && ((conc <= 32)) || asbx_die "--concurrency: '$conc' is not a whole number from 1 to 32"

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bench_seat_toml "$work" ledger="$work/ledger.jsonl" runtime_dir="$work/run"
export XDG_CONFIG_HOME=$work
log() { printf '[compare] %s\n' "$*" >&2; }

ASBX="$ASBX_BUILD/agent-sandbox ${LIMITS[*]}"
PODMAN_CLI="podman run $PODMAN_FLAGS"
PODMAN_REMOTE="podman --url unix://$ASBX_SOCKET run $PODMAN_FLAGS"

rows=()   # "name|ours_s|theirs_s|ratio|target|met"
row() { rows+=("$1|$2|$3|$4|$5|$6"); }
median() { jq -r ".results[$2].median" "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
yes_no() { if "$@"; then echo yes; else echo NO; fi; }
busy() { awk '/^cpu / { print ($2 + $4 + $7 + $8) / 100 }' /proc/stat; }  # CPU seconds, all cores

hf() {  # hf NAME OUT_JSON CMD_A CMD_B [CMD_C]: alternating runs, medians
  local name=$1 out=$2; shift 2
  local args=(); for c in "$@"; do args+=("$c"); done
  log "$name"
  hyperfine -N --warmup "$warmup" --runs "$runs" --export-json "$out" "${args[@]}" >&2
}

# 1. Local session, `true`.
hf "local session -- true" "$work/local.json" "$ASBX -- true" "$PODMAN_CLI $ASBX_IMAGE true" \
  "$PODMAN_REMOTE $ASBX_IMAGE true"
ours=$(median "$work/local.json" 0); cli=$(median "$work/local.json" 1); rem=$(median "$work/local.json" 2)
r=$(ratio "$ours" "$cli"); row "local session \`-- true\` vs \`podman run\` CLI" "$ours" "$cli" "$r" "≤ 0.85×" "$(yes_no le "$r" 0.85)"
r=$(ratio "$ours" "$rem"); row "local session \`-- true\` vs \`podman --remote run\`" "$ours" "$rem" "$r" "—" "—"

# 1a. The same, 1 s apart: the caller's own wait. Back to back, a session's deferred removal
#     (docs/DECISIONS.md, "the wait for podman's cleanup") overlaps the next run's create and init
#     and its gc's list (podman locks the container being cleaned up); spaced, each call is alone.
log "local session -- true, 1 s apart"
hyperfine -N --warmup "$warmup" --runs "$runs" --prepare 'sleep 1' --export-json "$work/spaced.json" \
  "$ASBX -- true" "$PODMAN_CLI $ASBX_IMAGE true" ${before:+"$before/agent-sandbox ${LIMITS[*]} -- true"} >&2
ours=$(median "$work/spaced.json" 0); cli=$(median "$work/spaced.json" 1)
row "local session \`-- true\`, 1 s apart, vs \`podman run\` CLI" "$ours" "$cli" "$(ratio "$ours" "$cli")" "≤ 0.85×" "$(yes_no le "$(ratio "$ours" "$cli")" 0.85)"
if [[ -n $before ]]; then
  old=$(median "$work/spaced.json" 2)
  row "local session \`-- true\`, 1 s apart: this build vs \`$before\`" "$ours" "$old" "$(ratio "$ours" "$old")" "stated" "—"
fi

if [[ -n $before ]]; then
  hf "local session -- true, before/after" "$work/before.json" "$ASBX -- true" "$before/agent-sandbox ${LIMITS[*]} -- true"
  ours=$(median "$work/before.json" 0); old=$(median "$work/before.json" 1)
  row "local session \`-- true\`: this build vs \`$before\`" "$ours" "$old" "$(ratio "$ours" "$old")" "stated" "—"
fi

# 1b. The time from the call to the agent's first instruction: the agent's first process prints
#     the clock (`date +%s%N`, the command itself, exec'd by the container's init), median of the runs.
first_instruction() {  # first_instruction CMD...: median ms from the call to the agent's clock
  local i s t out=()
  for i in $(seq 1 "$runs"); do
    s=$(date +%s%N); t=$("$@" date +%s%N 2>/dev/null | tail -1)
    out+=("$(( (t - s) / 1000000 ))")
  done
  printf '%s\n' "${out[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] / 1000 }'
}
log "call → the agent's first instruction"
ours=$(first_instruction $ASBX --); cli=$(first_instruction $PODMAN_CLI "$ASBX_IMAGE")
row "call → the agent's first instruction (cold path; median of $runs)" "$ours" "$cli" "$(ratio "$ours" "$cli")" "≤ 0.100 s (warm)" "$(yes_no le "$ours" 0.1)"

# 1c. The warm pool (docs/DECISIONS.md "Issue 37: the warm pool"): a seat with the same limits as
#     the rows above and pool_size members; each run waits (untimed) for a ready member, as a seat
#     whose refill keeps up would have one. The cold column is the same seat with the pool off.
warm_seat() {  # warm_seat DIR POOL_SIZE
  bench_seat_toml "$1" ledger="$1/ledger.jsonl" runtime_dir="$work/run-warm" workspace_root="$work/ws"
  sed -i "1i pool_size = $2" "$1/agent-sandbox/seat.toml"
  printf '[limits]\nmemory = "2g"\npids = 256\ncpus = 2.0\n' >>"$1/agent-sandbox/seat.toml"
}
ready_members() { bench_ready_members "$work/run-warm"; }
wait_ready() {  # wait_ready N: until N members are ready (at most 60 s)
  local until=$((SECONDS + 60))
  while (($(ready_members) < $1 && SECONDS < until)); do sleep 0.05; done
}
warm_seat "$work/warm" 2; warm_seat "$work/cold" 0
WARM="env XDG_CONFIG_HOME=$work/warm $ASBX_BUILD/agent-sandbox"
COLD="env XDG_CONFIG_HOME=$work/cold $ASBX_BUILD/agent-sandbox"
$WARM pool fill 2>/dev/null; wait_ready 2
export -f bench_ready_members ready_members wait_ready; export ASBX_SOCKET work
log "local session -- true: warm vs cold vs the CLI"
hyperfine -N --warmup "$warmup" --runs "$runs" --prepare 'bash -c "wait_ready 1"' --export-json "$work/warm.json" \
  "$WARM -- true" "$COLD -- true" "$PODMAN_CLI $ASBX_IMAGE true" >&2
w=$(median "$work/warm.json" 0); c=$(median "$work/warm.json" 1); cli=$(median "$work/warm.json" 2)
row "local session \`-- true\`, warm vs \`podman run\` CLI" "$w" "$cli" "$(ratio "$w" "$cli")" "≤ 0.3×" "$(yes_no le "$(ratio "$w" "$cli")" 0.3)"
row "local session \`-- true\`, warm vs cold (same seat, pool off)" "$w" "$c" "$(ratio "$w" "$c")" "stated" "—"
# The same, each call 2 s after the last (a user's pace): its remover, its refill and the CLI's own
# cleanup are done, where back to back they share the 2 cores with the next call (bench/warm_tail.sh).
log "local session -- true: warm vs the CLI, 2 s apart"
hyperfine -N --warmup "$warmup" --runs "$runs" --prepare 'bash -c "sleep 2; wait_ready 1"' \
  --export-json "$work/warm-spaced.json" "$WARM -- true" "$PODMAN_CLI $ASBX_IMAGE true" >&2
w=$(median "$work/warm-spaced.json" 0); cli=$(median "$work/warm-spaced.json" 1)
row "local session \`-- true\`, warm vs \`podman run\` CLI, 2 s apart" "$w" "$cli" "$(ratio "$w" "$cli")" "≤ 0.3×" "$(yes_no le "$(ratio "$w" "$cli")" 0.3)"
log "a plain clone's git status: warm vs cold vs the CLI"
repo="$work/ws/repo"; mkdir -p "$repo"
git -C "$repo" init -q -b main && seq 1 200 | xargs -I{} touch "$repo/f{}" && git -C "$repo" add . &&
  git -C "$repo" -c user.name=b -c user.email=b@b commit -qm bench && chown -R 1000:1000 "$repo"
hyperfine -N --warmup "$warmup" --runs "$runs" --prepare 'bash -c "wait_ready 1"' --export-json "$work/warm-git.json" \
  "$WARM --workspace $repo -- git status --short" "$COLD --workspace $repo -- git status --short" \
  "$PODMAN_CLI -v $repo:/sandbox/workspaces/repo -w /sandbox/workspaces/repo $ASBX_IMAGE git status --short" >&2
w=$(median "$work/warm-git.json" 0); c=$(median "$work/warm-git.json" 1); cli=$(median "$work/warm-git.json" 2)
row "a plain clone's \`git status\`, warm vs \`podman run -v\` CLI" "$w" "$cli" "$(ratio "$w" "$cli")" "≤ 0.3×" "$(yes_no le "$(ratio "$w" "$cli")" 0.3)"
row "a plain clone's \`git status\`, warm vs cold (its gitdir guarded on both)" "$w" "$c" "$(ratio "$w" "$c")" "stated" "—"
log "call → the agent's first instruction, warm"
first_warm() {  # median ms from the call to the agent's clock, a ready member before each call
  local i s t out=()
  for i in $(seq 1 "$runs"); do
    wait_ready 1; s=$(date +%s%N); t=$($WARM -- date +%s%N 2>/dev/null | tail -1)
    out+=("$(( (t - s) / 1000000 ))")
  done
  printf '%s\n' "${out[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] / 1000 }'
}
ours=$(first_warm); cli=$(first_instruction $PODMAN_CLI "$ASBX_IMAGE")
row "call → the agent's first instruction (warm path; median of $runs)" "$ours" "$cli" "$(ratio "$ours" "$cli")" "≤ 0.100 s" "$(yes_no le "$ours" 0.1)"
log "$conc concurrent claims: call → first instruction, p95"
warm_seat "$work/warm" "$conc"; $WARM pool fill 2>/dev/null; wait_ready "$conc"
b0=$(busy); sleep "$idle_s"; b1=$(busy)
idle_cpu=$(awk -v a="$b0" -v b="$b1" -v s="$idle_s" 'BEGIN { printf "%.3f", (b - a) / s }')
pids=$(podman --url "unix://$ASBX_SOCKET" ps -a -q --filter "label=agent-sandbox.pool-runtime-dir=$work/run-warm" |
  xargs podman --url "unix://$ASBX_SOCKET" inspect \
    --format '{{index .Config.Labels "agent-sandbox.launcher-pid"}} {{.State.ConmonPid}} {{.State.Pid}}')
rss=0; for p in $pids; do rss=$((rss + $(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0))); done
for i in $(seq 1 "$conc"); do
  ( s=$(date +%s%N); t=$($WARM -- date +%s%N 2>/dev/null | tail -1); echo "$(( (t - s) / 1000000 ))" >"$work/claim.$i" ) &
done
wait
p95=$(cat "$work"/claim.* | sort -n | awk '{ a[NR] = $1 } END { print a[int(NR * 0.95 + 0.999)] / 1000 }')
row "$conc concurrent claims: call → first instruction, p95 ($conc members ready)" "$p95" "$ours" "$(ratio "$p95" "$ours")" "≤ 0.100 s" "$(yes_no le "$p95" 0.1)"
row "the idle pool of $conc: the machine's CPU (cores, over $idle_s s) / the members' processes' RSS (KiB: keeper, conmon, runc init)" "$idle_cpu" "$rss" "—" "stated" "—"
warm_seat "$work/warm" 0  # drained: again while a refill a session spawned holds the fill lock
for _ in $(seq 1 300); do
  $WARM pool fill 2>&1 | grep -q 'another fill' || (($(ready_members) > 0)) || break; sleep 0.2
done

# 2. Streaming: N MiB of stdout to /dev/null, and the launcher's peak RSS meanwhile.
bytes=$((stream_mib * 1048576))
hf "stream ${stream_mib} MiB" "$work/stream.json" \
  "bash -c '$ASBX -- head -c $bytes /dev/zero >/dev/null'" \
  "bash -c '$PODMAN_CLI $ASBX_IMAGE head -c $bytes /dev/zero >/dev/null'"
ours=$(median "$work/stream.json" 0); theirs=$(median "$work/stream.json" 1)
r=$(ratio "$theirs" "$ours")
row "${stream_mib} MiB stdout, local: throughput vs \`podman run … head\`" "$ours" "$theirs" "$r" "≥ 0.9×" "$(yes_no ge "$r" 0.9)"
# One more run of each with /usr/bin/time: peak RSS, and where the CPU goes (the launcher or the
# podman CLI itself; the podman service, from its /proc stat; everything else: conmon, the
# container, the kernel's pipe and socket copies — the machine's busy time minus both).
svc_pid=$(asbx_pid_alive "$ASBX_RUN/podman.pid") || asbx_die "the podman service is not running (scripts/podman-service.sh start)"
svc_cpu() { awk '{ print ($14 + $15) / 100 }' "/proc/$svc_pid/stat"; }
# user system irq softirq, in s; niced work (a long fuzz run beside the benchmark) is left out
timed() {  # timed CMD...: prints "peak_rss_kib own_cpu_s service_cpu_s machine_cpu_s wall_s"
  local b0 v0 s e out
  b0=$(busy); v0=$(svc_cpu); s=$(date +%s.%N)
  /usr/bin/time -o "$work/time.out" -f '%M %U %S' "$@" >/dev/null 2>&1
  out=$(tail -1 "$work/time.out")
  e=$(date +%s.%N)
  awk -v o="$out" -v b0="$b0" -v b1="$(busy)" -v v0="$v0" -v v1="$(svc_cpu)" -v s="$s" -v e="$e" \
    'BEGIN { split(o, f, " "); printf "%d %.2f %.2f %.2f %.2f\n", f[1], f[2] + f[3], v1 - v0, b1 - b0, e - s }'
}
read -r rss our_cpu our_svc our_all our_wall < <(timed $ASBX -- head -c "$bytes" /dev/zero)
read -r prss cli_cpu cli_svc cli_all cli_wall < <(timed $PODMAN_CLI "$ASBX_IMAGE" head -c "$bytes" /dev/zero)
row "peak RSS while streaming (KiB)" "$rss" "$prss" "$(ratio "$rss" "$prss")" "≤ 12288 KiB" "$(yes_no le "$rss" 12288)"
split() { awk -v a="$1" -v b="$2" -v c="$3" -v w="$4" \
  'BEGIN { printf "own %.2f + service %.2f + rest %.2f = %.2f CPU s in %.2f s", a, b, c - a - b, c, w }'; }
row "CPU while streaming ${stream_mib} MiB (own = the launcher / the podman CLI)" \
  "$(split "$our_cpu" "$our_svc" "$our_all" "$our_wall")" "$(split "$cli_cpu" "$cli_svc" "$cli_all" "$cli_wall")" \
  "$(ratio "$our_all" "$cli_all")" "stated" "—"

# 3. C (16) concurrent local sessions: all succeed, p95 against one, nothing left behind. The same
#    through the podman CLI for comparison, and the floor the machine sets: the CPU seconds the
#    sessions used (all processes, from /proc/stat) spread over every core.
concurrent() {  # concurrent TAG CMD...: C at once ({i} in CMD is the run's number); sets failed, p95, cpu_s
  local tag=$1 b0 b1; shift
  b0=$(busy)
  for i in $(seq 1 "$conc"); do
    ( set +e; s=$(date +%s.%N); "${@//\{i\}/$i}" >/dev/null 2>&1; rc=$?; e=$(date +%s.%N)
      echo "$rc $(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')" >"$work/$tag.$i" ) &
  done
  wait
  b1=$(busy)
  failed=$(cat "$work/$tag".* | awk '$1 != 0' | wc -l)
  p95=$(cat "$work/$tag".* | awk '{ print $2 }' | sort -n | awk '{ a[NR] = $1 } END { print a[int(NR * 0.95 + 0.999)] }')
  cpu_s=$(awk -v a="$b0" -v b="$b1" 'BEGIN { printf "%.2f", b - a }')
}
log "$conc concurrent sessions"
fds_before=$(ls "/proc/$svc_pid/fd" | wc -l)
single=$(median "$work/local.json" 0)
concurrent ours $ASBX --id "bench-$$-c{i}" -- true
ours_failed=$failed ours_p95=$p95 ours_cpu=$cpu_s
sleep 1
left=$(podman --url "unix://$ASBX_SOCKET" ps -a --filter label=agent-sandbox.session --format '{{.Names}}' |
       grep -c "^asbx-bench-$$-c" || true)
dirs=$( { find "$work/run" -mindepth 1 -maxdepth 2 2>/dev/null || true; } | wc -l)
fds_after=$(ls "/proc/$svc_pid/fd" | wc -l)  # other sessions running meanwhile count too: read it on an idle seat
r=$(ratio "$ours_p95" "$single")
row "$conc concurrent: p95 vs one session ($ours_failed failed; left: $left containers, $dirs session entries, service fds $fds_before→$fds_after)" \
  "$ours_p95" "$single" "$r" "≤ 3×, 0 failed, 0 left" \
  "$(yes_no bash -c "[[ $ours_failed == 0 && $left == 0 && $dirs == 0 ]] && awk -v a=$r 'BEGIN{exit !(a<=3)}'")"
floor=$(awk -v c="$ours_cpu" -v n="$(nproc)" 'BEGIN { printf "%.3f", c / n }')
row "$conc concurrent: the machine's floor ($ours_cpu CPU s for the $conc on $(nproc) cores) vs one session" \
  "$floor" "$single" "$(ratio "$floor" "$single")" "stated" "—"
concurrent cli $PODMAN_CLI "$ASBX_IMAGE" true
cli_single=$(median "$work/local.json" 1)
row "$conc concurrent \`podman run\` CLI ($failed failed, $cpu_s CPU s): p95 vs one CLI run" "$p95" "$cli_single" \
  "$(ratio "$p95" "$cli_single")" "stated" "—"
row "$conc concurrent: our p95 vs the CLI's p95" "$ours_p95" "$p95" "$(ratio "$ours_p95" "$p95")" "stated" "—"

# 4. Remote dispatch and the first session after the seat's podman socket was idle.
if ((remote)); then
  reg=$work/registry.toml
  grep -q '^\[\[host\]\]' "$registry" 2>/dev/null || asbx_die "no seat registry at $registry (boot the seats)"
  # one seat only, so both sides talk to the same host
  awk '/^\[\[host\]\]/ { n++ } n <= 1' "$registry" >"$reg"
  seat=$(awk -F'"' '/^name *=/ { print $2; exit }' "$reg")
  SSH="ssh -F $state/ssh_config $seat"
  hf "remote dispatch -- true" "$work/remote.json" \
    "$ASBX_BUILD/agent-sandbox --registry $reg ${LIMITS[*]} -- true" \
    "$SSH podman run $PODMAN_FLAGS $ASBX_IMAGE true"
  ours=$(median "$work/remote.json" 0); theirs=$(median "$work/remote.json" 1)
  r=$(ratio "$ours" "$theirs")
  row "remote dispatch \`-- true\` vs \`ssh seat podman run\`" "$ours" "$theirs" "$r" "≤ 0.8×" "$(yes_no le "$r" 0.8)"
  rbytes=$((bytes / 4))
  hf "remote stream" "$work/rstream.json" \
    "bash -c '$ASBX_BUILD/agent-sandbox --registry $reg ${LIMITS[*]} -- head -c $rbytes /dev/zero >/dev/null'" \
    "bash -c '$SSH podman run $PODMAN_FLAGS $ASBX_IMAGE head -c $rbytes /dev/zero >/dev/null'"
  ours=$(median "$work/rstream.json" 0); theirs=$(median "$work/rstream.json" 1)
  r=$(ratio "$theirs" "$ours")
  row "$((stream_mib / 4)) MiB stdout, remote: throughput vs \`ssh seat podman run … head\`" "$ours" "$theirs" "$r" "≥ 0.9×" "$(yes_no ge "$r" 0.9)"
  # socket activation: stop the seat's service (the socket stays), then one session
  $SSH 'systemctl --user stop podman.service' >/dev/null 2>&1 || true
  s=$(date +%s.%N); $ASBX_BUILD/agent-sandbox --registry "$reg" "${LIMITS[@]}" -- true; e=$(date +%s.%N)
  cold=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }')
  warm=$(median "$work/remote.json" 0)
  row "first remote session after the seat's podman socket was idle (vs warm)" "$cold" "$warm" "$(ratio "$cold" "$warm")" "stated" "—"
fi

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME"), podman $(podman --version | awk '{print $3}'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: bench/compare.sh --runs $runs --warmup $warmup --idle-seconds $idle_s --concurrency $conc$( ((remote)) || echo ' --no-remote') --stream-mib $stream_mib${before:+ --before BUILD}"
echo
echo "| row | agent-sandbox | the other tool | ratio | target | met |"
echo "|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
  IFS='|' read -r name a b ratio target met <<<"$r"
  fmt() { [[ $1 =~ ^[0-9]+\.[0-9]+$ ]] && printf '%.3f s' "$1" || printf '%s' "$1"; }
  echo "| $name | $(fmt "$a") | $(fmt "$b") | $ratio× | $target | $met |"
done
if [[ -n $json_out ]]; then
  printf '%s\n' "${rows[@]}" | jq -R 'split("|") | {row: .[0], ours: .[1], theirs: .[2], ratio: .[3], target: .[4], met: .[5]}' |
    jq -s . >"$json_out"
fi
