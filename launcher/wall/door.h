// The door: a TCP listener on 127.0.0.1:PORT inside the container's network namespace, opened
// from the seat side before the agent starts. A short child enters the container's user
// namespace (rootless) and network namespace through /proc/PID/ns, binds and listens there,
// passes the listening fd back over a socketpair (SCM_RIGHTS) and exits; the launcher then
// accepts on it from its own namespace, where the upstream connections are made.
#pragma once

namespace asbx {

// The listening fd (close-on-exec). Throws Error(egress_unavailable) naming the step that failed.
int open_door(long container_pid, int port);

// gVisor (runsc --network=host) leaves a fresh namespace's lo down, where runc brings it up: the
// agent's 127.0.0.1 would then be routed to the tripwire's device and dropped there (a martian),
// a listener it starts unreachable. The same kind of child brings it up. Throws
// Error(isolation_unavailable) naming the step.
void bring_loopback_up(long container_pid);

}  // namespace asbx
