// Where runc hands the session its seccomp notify fd (docs/DECISIONS.md, issue 34, "Recording each
// refused call"). The profile names a socket in the session's own dir (OCI listenerPath); the
// launcher binds it before create. During `runc create` (podman's init) runc's parent connects and
// sends the container's state as JSON with the notify fd (SCM_RIGHTS, runc 1.1's
// sendContainerProcessState): the connection waits in the backlog and is taken after init. No
// socket, no container: runc create fails (seccomp_unavailable, nothing started).
#pragma once
#include <string>

#include "base/beneath.h"
#include "base/plan.h"

namespace asbx {

class SeccompListener {
 public:
  SeccompListener() = default;
  SeccompListener(const SeccompListener&) = delete;
  SeccompListener& operator=(const SeccompListener&) = delete;
  ~SeccompListener() { close(); }

  // Nothing when the plan names no listener. Makes the session dir (0700) when missing and binds
  // the socket. Throws Error(seccomp_unavailable) naming what failed; nothing of it stays.
  void bind(const LaunchPlan& plan);
  // After init: runc's connection, its peer checked, the notify fd taken (receive_notify_fd), and
  // the socket gone. An empty fd when nothing was bound. Throws Error(seccomp_unavailable).
  UniqueFd take(long container_pid);
  // A warm pool member's listening socket (launcher/pool/take.h), bound at PATH by its keeper.
  void adopt(UniqueFd listening, const std::string& path) {
    fd_ = std::move(listening);
    path_ = path;
  }
  int fd() const { return fd_.get(); }  // the listening socket (-1: none)
  void close();  // the socket (and the session dir when this made it) go; idempotent

 private:
  UniqueFd fd_;
  std::string path_;
  std::string dir_;  // the session dir, once taken (session_dir.h)
  std::string owner_;  // SESSION_DIR/owner, while this listener's session has no container
};

// From a listening socket whose connection is already queued (it never waits for one): accept it,
// check its peer is root or this user (SO_PEERCRED), read runc's state (its pid must be
// `container_pid` when that is > 0) and the one fd it carries, and check that fd is a seccomp
// notify fd. An empty fd and `why` on any failure.
UniqueFd receive_notify_fd(int listener_fd, long container_pid, std::string& why);

}  // namespace asbx
