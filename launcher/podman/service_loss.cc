#include "launcher/podman/service_loss.h"

#include <cerrno>
#include <csignal>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launcher/lifecycle/pump.h"

namespace asbx {

ContainerInit::~ContainerInit() {
  if (fd_ >= 0) ::close(fd_);
}

void ContainerInit::hold(long pid) {
  if (pid <= 0 || fd_ >= 0) return;
  pid_ = pid;
  fd_ = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
}

bool ContainerInit::kill() {
  return fd_ >= 0 && ::syscall(SYS_pidfd_send_signal, fd_, SIGKILL, nullptr, 0) == 0;
}

bool ContainerInit::outlives(int ms) const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  int n = 0;
  while ((n = ::poll(&p, 1, ms)) < 0 && errno == EINTR) {
  }
  return n == 0;
}

Error service_lost(const Error& error, ContainerInit& init) {
  if (error.kind() != ErrorKind::podman_unreachable || init.pid() <= 0) return error;
  std::string stopped = init.kill() ? "the agent was stopped without it (SIGKILL to the container's init, pid " +
                                          std::to_string(init.pid()) + ")"
                                    : "the container's init (pid " + std::to_string(init.pid()) +
                                          ") could not be signalled: it had already ended";
  return Error(ErrorKind::podman_unreachable,
               std::string("the podman service went away mid-session (") + error.what() + "); " + stopped);
}

bool remove_when_back(PodmanApi& api, const std::string& id, int wait_ms) {
  std::int64_t until = steady_ms() + wait_ms;
  for (;;) {
    if (api.remove(id)) return true;
    if (steady_ms() >= until) return false;
    ::usleep(250'000);
  }
}

}  // namespace asbx
