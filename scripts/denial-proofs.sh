#!/usr/bin/env bash
# Denial proofs: runs one real session (a staged codex credential, a linked git worktree as
# the workspace, secret-looking names in the caller's environment) and asserts from INSIDE:
#   - the EXACT set of mount destinations (an allowlist with the mode each must have),
#   - system mounts read-only; the workspace and what a commit writes (objects, refs, logs, the
#     worktree's gitdir) writable; the mirror's config, hooks and info read-only, its root the
#     session's own tmpfs (nothing written there reaches the host), the `.git` link read-only,
#   - no other workspace, no ~/.ssh, no podman or bus socket of the host,
#   - an environment free of secret-looking names.
# Exit 0 only when every check holds; each check prints one "ok"/"FAIL" line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
LAUNCHER=$ASBX_BUILD/agent-sandbox
[ -x "$LAUNCHER" ] || asbx_die "$LAUNCHER is not built (ninja -C $ASBX_BUILD)"

T=$(mktemp -d /tmp/asbx-denial-XXXXXX)
trap 'rm -rf "$T"' EXIT
HOST_HOME=$T/home
ROOTS=$T/workspaces
COMMON=$T/git-common
mkdir -p "$HOST_HOME/.codex" "$HOST_HOME/.ssh" "$T/config/agent-sandbox" "$ROOTS/other" "$COMMON/main"
echo '{"refresh_token":"denial-proof-not-a-token"}' > "$HOST_HOME/.codex/auth.json"
chmod 600 "$HOST_HOME/.codex/auth.json"
echo "not a key" > "$HOST_HOME/.ssh/id_ed25519"
cat > "$T/config/agent-sandbox/seat.toml" <<TOML
socket = "${ASBX_SEAT_SOCKET:-$ASBX_SOCKET}"
workspace_root = "$ROOTS"
git_roots = ["$COMMON"]
runtime_dir = "$T/run"
TOML
# The test matrix's other mode: a rootful seat that says it wants no user namespace of the session's own.
[[ ${ASBX_TEST_USERNS:-} == host && $(id -u) == 0 ]] && echo 'user_namespace = "host"' >> "$T/config/agent-sandbox/seat.toml"
g() { git -c safe.directory='*' -c user.name=proof -c user.email=proof@x "$@"; }
g -C "$COMMON/main" init -q -b main
g -C "$COMMON/main" commit -q --allow-empty -m base
g -C "$COMMON/main" worktree add -q -b proof "$ROOTS/wt" >/dev/null
GITDIR=$COMMON/main/.git/worktrees/wt
# A root caller's agent runs as 1000:1000: it must own what it is meant to write.
[ "$(id -u)" = 0 ] && chown -R 1000:1000 "$ROOTS" "$COMMON"

# Inside: report mounts, probes and env names; judge nothing there (the agent side is untrusted).
INSIDE='
awk "{print \"mount\", \$5, substr(\$6,1,2)}" /proc/self/mountinfo
w() { touch "$1/.asbx-probe" 2>/dev/null && rm -f "$1/.asbx-probe" && echo "probe $2 writable" || echo "probe $2 readonly"; }
w "$PWD" workspace; w "$1" gitdir; w "$2/objects" objects; w "$2/hooks" hooks
( : >> "$2/config" ) 2>/dev/null && echo "probe config writable" || echo "probe config readonly"
( : >> .git ) 2>/dev/null && echo "probe link writable" || echo "probe link readonly"
touch "$2/.asbx-top" 2>/dev/null && echo "probe top written"
echo "probe copy $(stat -c %a /sandbox/home/.codex/auth.json 2>&1)"
echo "probe workspaces $(ls -A /sandbox/workspaces | tr "\n" " ")"
echo "probe pwd $PWD"
for p in "$3/.ssh" /root/.ssh /run/podman /run/agent-sandbox /run/dbus /run/user /var/run/docker.sock; do
  [ -e "$p" ] && echo "probe present $p"
done
# the .ssh in HOME holds the tripwire decoys (fake keys, docs/EGRESS.md): the host key must never be there.
grep -rqsF "not a key" /sandbox/home/.ssh && echo "probe present the host ssh key in /sandbox/home/.ssh"
find / \( -path /proc -o -path /sys \) -prune -o -type s -print 2>/dev/null | sed "s/^/probe socket /"
env | cut -d= -f1 | sed "s/^/env /"
'
OUT=$(cd "$T" && env HOME="$HOST_HOME" XDG_CONFIG_HOME="$T/config" XDG_STATE_HOME="$T/state" \
      GITHUB_TOKEN=x AWS_SECRET_ACCESS_KEY=x DB_PASSWORD=x SSH_AUTH_SOCK=/tmp/agent.sock OPENAI_API_KEY=x \
      "$LAUNCHER" --id "denial-proofs-$$" --runtime codex --workspace "$ROOTS/wt" --git-mirror "$COMMON/main/.git" --status-file "$T/status.json" \
      -- bash -c "$INSIDE" proof "$GITDIR" "$COMMON/main/.git" "$HOST_HOME")

fails=0 checks=0
check() {  # check DESCRIPTION COMMAND...
  checks=$((checks + 1))
  if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
# The allowlist: destination → mode. Nothing else may be mounted, nothing here may be missing.
C=$COMMON/main/.git  # its root is a tmpfs inside (docs/MOUNTS.md), what git obeys bound read-only in it
declare -A WANT=(
  [/]=ro [/etc/hosts]=ro [/etc/hostname]=ro [/run/.containerenv]=ro [/run/podman-init]=ro
  [/sys]=ro [/proc/bus]=ro [/proc/fs]=ro [/proc/irq]=ro [/proc/sys]=ro [/proc/acpi]=ro
  [/sys/firmware]=ro [/sys/dev/block]=ro
  [/proc]=rw [/dev]=rw [/dev/pts]=rw [/dev/shm]=rw [/dev/mqueue]=rw [/sys/fs/cgroup]=rw
  [/proc/keys]=rw [/proc/timer_list]=rw [/proc/key-users]=rw [/sys/kernel/notes]=rw
  [/tmp]=rw [/sandbox/home]=rw
  [/sandbox/workspaces/wt]=rw [/sandbox/workspaces/wt/.git]=ro
  ["$GITDIR"]=rw ["$GITDIR/commondir"]=ro ["$GITDIR/gitdir"]=ro
  ["$C"]=rw ["$C/config"]=ro ["$C/description"]=ro ["$C/HEAD"]=ro ["$C/hooks"]=ro ["$C/info"]=ro
  ["$C/branches"]=ro ["$C/worktrees"]=ro ["$C/objects"]=rw ["$C/objects/info"]=ro ["$C/refs"]=rw ["$C/logs"]=rw
)
[ -e /proc/config.gz ] && WANT[/proc/config.gz]=rw  # masked where the kernel has it (seccomp/masked_paths.h)
# In a user namespace of its own (a rootful seat's default) runc cannot make device nodes: podman
# binds the six it gives every container from the seat's /dev instead.
if grep -q '"user_namespace": "range"' "$T/status.json"; then
  for dev in null zero full tty random urandom; do WANT[/dev/$dev]=rw; done
fi
declare -A SEEN=()
while read -r _ dest mode; do
  SEEN[$dest]=$mode
  case $dest in
    /sys/fs/cgroup/*) check "mount $dest is a cgroup controller, read-only" test "$mode" = ro ;;
    *) check "mount $dest is allowed and $mode" test "${WANT[$dest]:-unlisted}" = "$mode" ;;
  esac
done < <(grep '^mount ' <<<"$OUT")
for dest in "${!WANT[@]}"; do check "mount $dest is present" test -n "${SEEN[$dest]:-}"; done
probe() { grep -qx "probe $1" <<<"$OUT"; }
check "workspace is writable" probe "workspace writable"
check "gitdir is writable" probe "gitdir writable"
check "the mirror's config is read-only" probe "config readonly"
check "the workspace's .git link is read-only" probe "link readonly"
check "the mirror's top is the session's own: what was written there is not on the host" \
  eval 'probe "top written" && ! test -e "$C/.asbx-top"'
check "the mirror's hooks are read-only" probe "hooks readonly"
check "the mirror's objects are writable" probe "objects writable"
check "the credential is a 0600 copy in HOME, never a mount" probe "copy 600"
check "the working dir is /sandbox/workspaces/wt" probe "pwd /sandbox/workspaces/wt"
check "no other workspace is visible" probe "workspaces wt "
check "no ~/.ssh, podman, docker or bus path is present" eval '! grep -q "^probe present" <<<"$OUT"'
check "no socket anywhere in the container" eval '! grep -q "^probe socket" <<<"$OUT"'
secretish='(TOKEN|SECRET|PASSWORD|PASSWD|_KEY|APIKEY|SSH_AUTH_SOCK|_AUTH|CREDENTIALS)'
check "no secret-looking env name" eval '! grep "^env " <<<"$OUT" | grep -Eq "$secretish"'
check "the session ended normally" grep -q '"outcome": "exited"' "$T/status.json"
check "the host credential is untouched" grep -qx '{"refresh_token":"denial-proof-not-a-token"}' "$HOST_HOME/.codex/auth.json"
echo "denial-proofs: $((checks - fails))/$checks checks hold"
[ "$fails" = 0 ]
