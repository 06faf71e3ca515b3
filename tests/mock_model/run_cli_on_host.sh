#!/usr/bin/env bash
# Host-side proof: the real codex and claude CLIs each complete one tool-using turn against the
# scripted mock model server (tests/mock_model/server.py) and the tool call makes a git commit.
#
# Usage: tests/mock_model/run_cli_on_host.sh [codex] [claude]      (default: both)
# Env knobs:
#   AGENT_CLIS_MOCK_DIR  npm prefix holding the CLIs   (default /var/cache/agent-sandbox/agent-clis-mock)
#   CODEX_VERSION / CLAUDE_VERSION                     (default 0.171.0 / 2.1.332)
#   RUN_AS               user that runs the CLIs; as root the default is cloudsdk (uid 1000) if it
#                        exists, else root with IS_SANDBOX=1 for claude
#   CLI_TIMEOUT          seconds per CLI run (default 60)
#   KEEP=1               keep the temp work dir (printed) for inspection
#   MOCK_COMMAND         override the scripted shell command (e.g. `false` to see a FAIL)
# Exit 0 only if every requested CLI made the commit through its shell tool.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLI_DIR=${AGENT_CLIS_MOCK_DIR:-/var/cache/agent-sandbox/agent-clis-mock}
CODEX_VERSION=${CODEX_VERSION:-0.171.0}
CLAUDE_VERSION=${CLAUDE_VERSION:-2.1.332}
CLI_TIMEOUT=${CLI_TIMEOUT:-60}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
CLIS=("$@")
[ ${#CLIS[@]} -gt 0 ] || CLIS=(codex claude)

COMMAND=${MOCK_COMMAND:-'echo hello > note.txt && git add note.txt && git -c user.email=a@b -c user.name=agent commit -qm note'}
FINAL='MOCK-FINAL: note.txt committed'
PROMPT='Create note.txt containing hello and commit it.'

say() { printf '[mock-proof] %s\n' "$*"; }
die() { say "FATAL: $*"; exit 2; }

# ---------------------------------------------------------------- who runs the CLIs
if [ "$(id -u)" = 0 ]; then
  if [ -z "${RUN_AS:-}" ]; then
    if id -u cloudsdk >/dev/null 2>&1; then RUN_AS=cloudsdk; else RUN_AS=root; fi
  fi
else
  RUN_AS=$(id -un)
fi
as_user() {  # as_user CMD... ; clean env is set by the caller with env -i
  if [ "$RUN_AS" = "$(id -un)" ]; then "$@"; else runuser -u "$RUN_AS" -- "$@"; fi
}

# ---------------------------------------------------------------- install the CLIs if needed
case "$(uname -m)" in
  x86_64) CODEX_TRIPLE=x86_64-unknown-linux-musl; CODEX_PLAT=linux-x64 ;;
  aarch64) CODEX_TRIPLE=aarch64-unknown-linux-musl; CODEX_PLAT=linux-arm64 ;;
  *) die "unsupported arch $(uname -m)" ;;
esac
NM=$CLI_DIR/node_modules
CODEX_BIN=$NM/@openai/codex-$CODEX_PLAT/vendor/$CODEX_TRIPLE/bin/codex
CLAUDE_BIN=$NM/.bin/claude

pick_version() {  # pick_version PKG WANTED -> WANTED if published, else the nearest one
  local pkg=$1 want=$2
  if [ "$(npm view "$pkg@$want" version 2>/dev/null)" = "$want" ]; then echo "$want"; return; fi
  npm view "$pkg" versions --json 2>/dev/null | "$PY" -c '
import json, sys
want = sys.argv[1]
key = lambda v: tuple(int(x) if x.isdigit() else 0 for x in v.split("-")[0].split("."))
vs = [v for v in json.load(sys.stdin) if "-" not in v]
lower = [v for v in vs if key(v) <= key(want)]
print(max(lower, key=key) if lower else min(vs, key=key))' "$want"
}

installed_ok() {
  [ -x "$CODEX_BIN" ] && [ -x "$CLAUDE_BIN" ] || return 1
  "$CODEX_BIN" --version 2>/dev/null | grep -q "$CODEX_VERSION" || return 1
  "$CLAUDE_BIN" --version 2>/dev/null | grep -q "$CLAUDE_VERSION" || return 1
}

if ! installed_ok; then
  command -v npm >/dev/null || die "npm not found (apt-get install npm)"
  cv=$(pick_version @openai/codex "$CODEX_VERSION")
  av=$(pick_version @anthropic-ai/claude-code "$CLAUDE_VERSION")
  [ -n "$cv" ] && [ -n "$av" ] || die "npm view failed for the CLI packages"
  [ "$cv" = "$CODEX_VERSION" ] || say "NOTE: @openai/codex@$CODEX_VERSION not published; using $cv"
  [ "$av" = "$CLAUDE_VERSION" ] || say "NOTE: @anthropic-ai/claude-code@$CLAUDE_VERSION not published; using $av"
  CODEX_VERSION=$cv CLAUDE_VERSION=$av
  mkdir -p "$CLI_DIR"
  say "installing @openai/codex@$cv @anthropic-ai/claude-code@$av into $CLI_DIR"
  t0=$(date +%s)
  npm install --prefix "$CLI_DIR" --no-audit --no-fund \
    "@openai/codex@$cv" "@anthropic-ai/claude-code@$av" >"${TMPDIR:-/tmp}/agent-clis-mock-npm.log" 2>&1 \
    || { tail -20 "${TMPDIR:-/tmp}/agent-clis-mock-npm.log"; die "npm install failed"; }
  say "installed in $(( $(date +%s) - t0 )) s"
  installed_ok || die "CLIs not runnable after install (codex: $CODEX_BIN, claude: $CLAUDE_BIN)"
fi
[ -x "$CODEX_BIN" ] || CODEX_BIN=$NM/.bin/codex   # node wrapper fallback
say "codex:  $("$CODEX_BIN" --version 2>&1 | head -1)  ($CODEX_BIN)"
say "claude: $("$CLAUDE_BIN" --version 2>&1 | head -1)  ($(readlink -f "$CLAUDE_BIN"))"
say "CLIs run as: $RUN_AS"

# ---------------------------------------------------------------- start the mock
WORK=$(mktemp -d "${MOCK_WORK_ROOT:-/var/tmp}/agent-sandbox-mock.XXXXXX")
chmod 755 "$WORK"
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

LOG=$WORK/requests.jsonl
"$PY" "$HERE/server.py" --host 127.0.0.1 --port 0 --log "$LOG" \
  --command "$COMMAND" --final "$FINAL" --max-seconds $(( CLI_TIMEOUT * 2 + 60 )) \
  >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
PORT=
for _ in $(seq 100); do
  PORT=$(sed -n 's/^PORT=//p' "$WORK/server.out" 2>/dev/null | head -1)
  [ -n "$PORT" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.err"; die "mock server died"; }
  sleep 0.05
done
[ -n "$PORT" ] || die "mock server did not print PORT="
say "mock model on 127.0.0.1:$PORT (pid $SERVER_PID), log $LOG"

# ---------------------------------------------------------------- one CLI run
BASE_ENV=(PATH=/usr/local/bin:/usr/bin:/bin SHELL=/bin/bash LANG=C.UTF-8 TERM=dumb USER="$RUN_AS" LOGNAME="$RUN_AS")

count_turns() {  # count_turns API -> "turn1=N turn2=M other=K"
  "$PY" - "$LOG" "$1" <<'EOF'
import json, sys
log, api = sys.argv[1], sys.argv[2]
recs = [json.loads(l) for l in open(log) if l.strip()]
mine = [r for r in recs if r.get("api") == api]
print("turn1=%d turn2=%d aux=%d auth_header=%s" % (
    sum(r.get("turn") == 1 for r in mine), sum(r.get("turn") == 2 for r in mine),
    sum(r.get("turn") == "aux" for r in mine),
    "yes" if mine and all(r.get("authorization") or r.get("x_api_key") for r in mine) else "no"))
EOF
}

declare -A RESULT
run_cli() {
  local name=$1 dir=$WORK/$1 api env_lines cmd=()
  mkdir -p "$dir/home" "$dir/ws"
  git -C "$dir/ws" init -q
  local -a envs=("${BASE_ENV[@]}" HOME="$dir/home")
  case $name in
    codex)
      api=responses
      mapfile -t env_lines < <("$PY" -c '
import sys; sys.path.insert(0, sys.argv[1]); import agent_config as a
for k, v in a.codex_env(a.write_codex_home(sys.argv[2], sys.argv[3])).items(): print(k + "=" + v)
' "$HERE" "$dir/home" "http://127.0.0.1:$PORT/v1")
      cmd=("$CODEX_BIN" exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "$PROMPT") ;;
    claude)
      api=messages
      local sandbox=False; [ "$RUN_AS" = root ] && sandbox=True
      mapfile -t env_lines < <("$PY" -c '
import sys; sys.path.insert(0, sys.argv[1]); import agent_config as a
for k, v in a.claude_env(sys.argv[2], is_sandbox=sys.argv[3] == "True").items(): print(k + "=" + v)
' "$HERE" "http://127.0.0.1:$PORT" "$sandbox")
      cmd=("$CLAUDE_BIN" -p "$PROMPT" --dangerously-skip-permissions) ;;
    *) die "unknown CLI $name" ;;
  esac
  envs+=("${env_lines[@]}")
  [ "$RUN_AS" = root ] || chown -R "$RUN_AS:" "$dir"

  say "---- $name"
  say "env: $(printf '%s ' "${envs[@]}" | sed -E 's/((API_KEY)=)[^ ]*/\1<fake>/g')"
  say "cmd: (cd $dir/ws && timeout -k 5 $CLI_TIMEOUT ${cmd[*]} </dev/null)"
  local t0 t1 rc=0
  t0=$(date +%s%N)
  as_user env -i "${envs[@]}" env -C "$dir/ws" timeout -k 5 "$CLI_TIMEOUT" "${cmd[@]}" \
    </dev/null >"$dir/stdout" 2>"$dir/stderr" || rc=$?
  t1=$(date +%s%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", (b-a)/1e9}')

  local subj content turns ok=1
  subj=$(git -c safe.directory='*' -C "$dir/ws" log -1 --format=%s 2>/dev/null || true)
  content=$(git -c safe.directory='*' -C "$dir/ws" show HEAD:note.txt 2>/dev/null || true)
  turns=$(count_turns "$api")
  [ "$subj" = note ] && [ "$content" = hello ] || ok=0
  case $turns in *turn1=0*|*turn2=0*) ok=0 ;; esac
  say "exit=$rc time=${secs}s requests: $turns"
  say "commit subject='${subj}' note.txt='${content}'"
  say "stdout: $(head -c 300 "$dir/stdout" | tr '\n' ' ')"
  grep -q "$FINAL" "$dir/stdout" || say "WARNING: final text not on stdout"
  [ "$rc" = 124 ] && say "TIMED OUT after ${CLI_TIMEOUT}s"
  if [ $ok = 1 ]; then
    RESULT[$name]="PASS ${secs}s"
  else
    RESULT[$name]="FAIL (exit $rc, ${secs}s)"
    say "stderr tail:"; tail -25 "$dir/stderr" | sed 's/^/    /'
  fi
}

for c in "${CLIS[@]}"; do run_cli "$c"; done

others=$(grep -c '"api": "other"' "$LOG" || true)
[ "$others" = 0 ] || { say "unknown paths requested ($others):"; grep '"api": "other"' "$LOG" | sed 's/^/    /'; }

say "==== summary"
rc=0
for c in "${CLIS[@]}"; do
  say "$c: ${RESULT[$c]}"
  case ${RESULT[$c]} in PASS*) ;; *) rc=1 ;; esac
done
exit $rc
