// Finding the seat's podman API socket, and starting the user manager's podman.socket when
// the rootless socket is not listening yet (podman does not enable it by default).
#pragma once
#include <string>

#include "plan/config.h"

namespace asbx {

// True if something accepts connections on the unix socket at `path`.
bool socket_answers(const std::string& path);
// /run/user/<uid>/podman/podman.sock: the socket podman.socket of the user manager listens on.
std::string rootless_socket_path(unsigned uid);
// Nothing to do when `socket` answers. When it is this user's rootless socket, starts
// podman.socket through the user manager and returns "started podman.socket". Throws
// Error(podman_unreachable) naming the remedy when that fails. Other paths are left to the
// session, which reports them as podman_unreachable.
std::string ensure_podman_socket(const std::string& socket, const UserFacts& user);

}  // namespace asbx
