// gVisor sessions: the container's root as runsc's gofer serves it to the sandbox. Under runsc the
// container's process (podman's State.Pid) is the sandbox, whose own root is an empty directory;
// its gofer, a sibling under the same conmon, holds the image's root with every bind mounted at
// its place. Its /proc/PID/root is what the checks between init and start read (command lookup,
// bind identity, HOME and the git tmpfs: seat tmpfs binds, launcher/lifecycle/seat_tmpfs.h).
// Tmpfs mounts made by the sandbox (/tmp, /dev/shm) are not there: nothing reads them.
#pragma once
#include <string>

namespace asbx {

// The gofer of container `container_id` whose sandbox is `sandbox_pid`: a child of the sandbox's
// parent (conmon) running "runsc-gofer ... gofer --bundle .../<container_id>/userdata". Throws
// Error(isolation_unavailable) when there is none (or more than one).
long runsc_gofer_pid(long sandbox_pid, const std::string& container_id);

}  // namespace asbx
