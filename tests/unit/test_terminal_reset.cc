// The launcher's lines on a terminal the agent shares (docs/THREATS.md, "The launcher's own
// streams"): a sequence the agent left open cannot swallow or hide them.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <pty.h>
#include <string>
#include <unistd.h>

#include "launcher/lifecycle/diagnostics.h"

using namespace asbx;

namespace {

std::string read_some(int fd) {
  std::string got;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

}  // namespace

TEST_CASE("diagnostics: on a terminal each line starts with CAN, ST and SGR 0; on a pipe nothing is added") {
  int master = -1, slave = -1;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
  REQUIRE(::fcntl(master, F_SETFL, O_NONBLOCK) == 0);
  {
    Diagnostics d(slave);
    d.say("agent-sandbox: cleared setuid on x");
    d.say("second");
  }
  std::string got = read_some(master);
  std::string reset = "\x18\x1b\\\x1b[0m";
  CHECK(got.rfind(reset + "agent-sandbox: cleared setuid on x", 0) == 0);
  CHECK(got.find(reset + "second") != std::string::npos);
  ::close(master);
  ::close(slave);

  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0);
  {
    Diagnostics d(fds[1]);
    d.say("plain");
  }
  CHECK(read_some(fds[0]) == "plain\n");
  ::close(fds[0]);
  ::close(fds[1]);
}
