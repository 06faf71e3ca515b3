#include <doctest/doctest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/podman/service_loss.h"

using namespace asbx;

TEST_CASE("a lost podman service: the agent's init is killed through its pidfd and the message says so") {
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ContainerInit init;
  init.hold(child);
  Error lost = service_lost(Error(ErrorKind::podman_unreachable, "podman API at /s did not answer: x"), init);
  CHECK(lost.kind() == ErrorKind::podman_unreachable);
  CHECK(std::string(lost.what()) ==
        "the podman service went away mid-session (podman API at /s did not answer: x); the agent was stopped "
        "without it (SIGKILL to the container's init, pid " + std::to_string(child) + ")");
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  // Reaped: the pidfd now refuses, and the message says the init had already ended.
  Error again = service_lost(Error(ErrorKind::podman_unreachable, "y"), init);
  CHECK(std::string(again.what()).find("could not be signalled: it had already ended") != std::string::npos);
}

TEST_CASE("other errors, or no container init held, pass through unchanged") {
  ContainerInit none;
  Error other = service_lost(Error(ErrorKind::start_failed, "z"), none);
  CHECK(other.kind() == ErrorKind::start_failed);
  CHECK(std::string(service_lost(Error(ErrorKind::podman_unreachable, "w"), none).what()) == "w");
}
