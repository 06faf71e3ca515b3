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
echo
echo "Ready: '$ASBX_BUILD/agent-sandbox -- CMD' now runs CMD in a contained session."
