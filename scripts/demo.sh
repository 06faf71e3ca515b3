#!/usr/bin/env bash
# The first README command: set up the local seat and run one real contained session
# that reports, from inside the container, who it is and what confines it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$ASBX_ROOT/scripts/setup.sh"

status=$(mktemp)
trap 'rm -f "$status"' EXIT
"$ASBX_BUILD/agent-sandbox" --memory 2g --pids 256 --cpus 2 --status-file "$status" -- bash -c '
  echo "whoami:      $(id)"
  grep -E "^(NoNewPrivs|CapEff|CapBnd|Seccomp):" /proc/self/status | sed "s/^/             /"
  echo "pids.max:    $(cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max)"
  echo "memory:      $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max)"
  echo "memory+swap: $(cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes 2>/dev/null || echo n/a)"
  echo "cpu quota:   $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max) / $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us 2>/dev/null)"
  echo "cpu shares:  $(cat /sys/fs/cgroup/cpu/cpu.shares 2>/dev/null || echo n/a)"
  touch /etc/probe 2>/dev/null && echo "root fs:     WRITABLE" || echo "root fs:     read-only"
  echo "network:     $(ls /sys/class/net | tr "\n" " ")"'
echo "status record:"
jq -c '{id, outcome, exit_code, agent_exit_code, mode, limits}' "$status"

# The README's workspace example: a mirror where the agent (uid 1000 for a root caller) can
# reach it (the image's /root is 0700: the root seat's default git root is /srv/agent-sandbox/
# git-common) and a linked worktree as the workspace, both owned by the agent's user.
demo_workspace() {
  local ws=$HOME/sandbox/workspaces/fix-123 mirror=/srv/agent-sandbox/git-common/demo
  [ -e "$ws" ] && return 0
  local g=(git -c safe.directory='*' -c user.name=demo -c user.email=demo@localhost)
  mkdir -p "$(dirname "$ws")" "$(dirname "$mirror")"
  [ -d "$mirror/.git" ] || { "${g[@]}" init -q -b main "$mirror" && "${g[@]}" -C "$mirror" commit -q --allow-empty -m demo; }
  "${g[@]}" -C "$mirror" worktree add -q -b fix-123 "$ws"
  chown -R 1000:1000 "$mirror" "$ws"
  echo "workspace:   $ws (a linked worktree of $mirror/.git, owned by 1000:1000)"
}
[ "$(id -u)" -eq 0 ] && demo_workspace
echo
echo "Ready: '$ASBX_BUILD/agent-sandbox -- CMD' now runs CMD in a contained session."
