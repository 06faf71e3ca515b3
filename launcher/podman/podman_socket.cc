#include "launcher/podman/podman_socket.h"

#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/reexec.h"

namespace asbx {

bool socket_answers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string rootless_socket_path(unsigned uid) { return "/run/user/" + std::to_string(uid) + "/podman/podman.sock"; }

std::string ensure_podman_socket(const std::string& socket, const UserFacts& user) {
  if (socket_answers(socket)) return "";
  if (user.uid == 0 || socket != rootless_socket_path(user.uid)) return "";
  int rc = systemctl_user({"start", "podman.socket"}, true);
  if (rc == 0 && socket_answers(socket)) return "started podman.socket";
  throw Error(ErrorKind::podman_unreachable,
              "podman API socket " + socket + " is not active and 'systemctl --user start podman.socket' failed (exit " +
                  std::to_string(rc) + "); fix: systemctl --user enable --now podman.socket (the user manager needs "
                  "loginctl enable-linger " + user.name + ")");
}

}  // namespace asbx
