// The podman service dying mid-session. conmon keeps the container running with nobody
// left to supervise it, so the session holds a pidfd on the container's init from `init`
// on: without the service it can still stop the agent, and it waits a little for the
// service to come back (socket activation restarts it) before leaving the removal to gc.
#pragma once
#include <string>

#include "base/error.h"
#include "launcher/podman/podman_api.h"

namespace asbx {

class ContainerInit {
 public:
  ContainerInit() = default;
  ContainerInit(const ContainerInit&) = delete;
  ContainerInit& operator=(const ContainerInit&) = delete;
  ~ContainerInit();

  void hold(long pid);  // pidfd_open; without one (old kernel) kill() just says no
  bool kill();          // SIGKILL through the pidfd: true when the signal went out
  // True when the init still runs `ms` after the attach stream ended. podman ends that stream
  // only once the container has exited, so a live init means the service, not the agent, went.
  bool outlives(int ms) const;
  long pid() const { return pid_; }

 private:
  int fd_ = -1;
  long pid_ = 0;
};

// A podman_unreachable error after the container was created: the agent is killed through
// `init` and the message says that the service went away mid-session. Other errors unchanged.
Error service_lost(const Error& error, ContainerInit& init);

// How long an init may take to be seen gone after its attach stream ended (normally at once).
constexpr int kStreamOutlivedMs = 5'000;

// How long a session whose service died waits for it before leaving the container to gc.
constexpr int kServiceBackMs = 10'000;

// DELETE, retried every 250 ms for up to `wait_ms` while the service does not answer.
bool remove_when_back(PodmanApi& api, const std::string& id, int wait_ms);

}  // namespace asbx
