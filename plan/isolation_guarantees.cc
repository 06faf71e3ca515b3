// The guarantees of a runc session and how each holds under gVisor (runsc), or why such a
// session is refused before anything is created. docs/ISOLATION.md prints this table.
#include "plan/isolation.h"

namespace asbx {

const std::vector<GuaranteeRow>& guarantee_table() {
  static const std::vector<GuaranteeRow> rows = {
      {"limits and their enforcement check",
       "the sandbox and its gofer run in the container's cgroup (memory, pids, cpu from the create body; pids.max "
       "is 96 + 10 per process asked for, the sandbox's own tasks counting there); podman's 'limits ignored' "
       "warning is read as for runc"},
      {"OOM, pids and timeout attribution",
       "read from the container's cgroup counters as for runc; an OOM kill ends the whole sandbox, so a counted OOM "
       "kill is killed_oom whatever exit code runsc reports, and a refused fork is killed_pids (the sandbox cannot "
       "go on without a task of its own)"},
      {"the container removed",
       "after podman's removal the launcher reads the container's pids cgroup and kills what is still there"},
      {"egress wall and tripwire",
       "runsc runs with network=host inside the session's own namespace (lo brought up by the launcher): the door "
       "and the tripwire's device are where they are under runc, reached through the seat's network stack; the "
       "record is the same, ICMP sockets are refused by the sentry"},
      {"injecting proxy (inject mode)",
       "refused (231): the end-of-session secret scan cannot reach /tmp, /dev/shm or the agent's memory inside the sandbox"},
      {"kernel-surface profile",
       "the create body's seccomp profile is applied by the sentry (--oci-seccomp); the sentry itself runs under "
       "runsc's own filter on the seat. Each refusal is on record: the seat's runsc wrapper points the sentry's "
       "debug log (JSON) at a FIFO the launcher reads, one entry per refused call (by call, without its "
       "arguments: the calls whose rows decide by arguments counted apart, as the agent's own filters log alike); "
       "tripwire = kill ends the session; a runtime that opens no log refuses the session (233)"},
      {"credentials copied into HOME",
       "HOME is a tmpfs the launcher mounts on the seat (same size, mode, owner) and binds in; staged through the "
       "gofer's root between init and start"},
      {"the git guard", "its tmpfs gitdir is a seat tmpfs bound in the same way; the sweep and scan read the binds on the seat"},
      {"state brought back", "read from the seat tmpfs HOME through the pinned fd, as under runc"},
      {"--tty, signals, --persist/attach", "podman's attach, resize and kill reach the sandbox's init as under runc"},
      {"ps, gc", "the label agent-sandbox.isolation says the wall; gc removes the container through the runsc service and "
                   "unmounts the seat tmpfs"},
      {"rootless seats", "refused (231): runsc and the seat tmpfs need a rootful seat"},
      {"Pod rendering", "runtimeClassName: gvisor"},
  };
  return rows;
}

}  // namespace asbx
