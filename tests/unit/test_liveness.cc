// Is a process that wrote down its pid and start time still that process (launcher/podman/liveness.h)?
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>

#include "launcher/podman/liveness.h"

using namespace asbx;

TEST_CASE("liveness: this process is alive; a later start (a reused pid) and a gone pid are not") {
  std::int64_t me = process_start_unix(::getpid());
  REQUIRE(me > 0);
  CHECK(launcher_alive(::getpid(), me));
  CHECK_FALSE(launcher_alive(::getpid(), me - 60));  // the label says it started a minute before this process
  CHECK_FALSE(launcher_alive(0, me));
}

TEST_CASE("liveness: a launcher killed and not yet reaped (a zombie) is gone") {
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::int64_t started = std::time(nullptr);
  CHECK(launcher_alive(child, started));
  ::kill(child, SIGKILL);
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT);  // dead, not reaped: a zombie
  CHECK(::kill(child, 0) == 0);  // what kill(0) alone said before
  CHECK_FALSE(launcher_alive(child, started));
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(launcher_alive(child, started));
}
