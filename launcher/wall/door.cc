#include "launcher/wall/door.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/wall/helper_channel.h"

namespace asbx {
namespace {

const char* const kSteps[] = {"enter the container's user namespace", "enter the container's network namespace",
                              "create the socket", "bind 127.0.0.1", "listen", "pass the listener back"};

[[noreturn]] void fail(const std::string& why) { throw Error(ErrorKind::egress_unavailable, "egress door: " + why); }

// lo in a fresh namespace may be down; bringing it up needs CAP_NET_ADMIN there, which the
// child has after entering the namespace's owner. 0, or the errno.
int loopback_up() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  int err = ::ioctl(s, SIOCGIFFLAGS, &ifr) == 0 ? 0 : errno;
  if (!err && !(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags |= IFF_UP;
    if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0) err = errno;
  }
  ::close(s);
  return err;
}

// Only async-signal-safe calls: the launcher may have threads when it forks.
[[noreturn]] void child(int userns, int netns, int port, int channel) {
  auto die = [&](int step) { helper_fails(channel, step, errno); };
  if (userns >= 0 && ::setns(userns, CLONE_NEWUSER) != 0) die(0);
  if (::setns(netns, CLONE_NEWNET) != 0) die(1);
  loopback_up();
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) die(2);
  int one = 1;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die(3);
  if (::listen(s, 64) != 0) die(4);
  if (!helper_send_fd(channel, s)) die(5);
  ::_exit(0);
}

// The listener, or throws with the child's reason.
int receive(int channel) {
  HelperAnswer a = helper_answer(channel, 10'000);
  if (a.timed_out) fail("the helper did not answer within 10 s");
  if (a.fd >= 0) return a.fd;
  if (a.failed && a.failure.step >= 0 && a.failure.step < 6)
    fail(std::string("cannot ") + kSteps[a.failure.step] + ": " + std::strerror(a.failure.err));
  fail("the helper exited without a listener");
}

[[noreturn]] void loopback_fails(const std::string& why) {
  throw Error(ErrorKind::isolation_unavailable, "gVisor (runsc): the session's loopback: " + why + "; nothing ran");
}

[[noreturn]] void loopback_child(int userns, int netns, int channel) {
  if (userns >= 0 && ::setns(userns, CLONE_NEWUSER) != 0) helper_fails(channel, 0, errno);
  if (::setns(netns, CLONE_NEWNET) != 0) helper_fails(channel, 1, errno);
  if (int e = loopback_up()) helper_fails(channel, 2, e);
  if (!helper_send_fd(channel, netns)) helper_fails(channel, 3, errno);  // any fd says "done"
  ::_exit(0);
}

int loopback_receive(int channel) {
  const char* const steps[] = {"enter the container's user namespace", "enter the container's network namespace",
                               "bring lo up", "say so"};
  HelperAnswer a = helper_answer(channel, 10'000);
  if (a.timed_out) loopback_fails("the helper did not answer within 10 s");
  if (a.fd >= 0) return a.fd;
  if (a.failed && a.failure.step >= 0 && a.failure.step < 4)
    loopback_fails(std::string("cannot ") + steps[a.failure.step] + ": " + std::strerror(a.failure.err));
  loopback_fails("the helper exited without bringing lo up");
}

}  // namespace

void bring_loopback_up(long pid) {
  int fd = run_helper(pid, ErrorKind::isolation_unavailable, "gVisor (runsc): the session's loopback: ",
                      [](int userns, int netns, int channel) { loopback_child(userns, netns, channel); },
                      loopback_receive);
  ::close(fd);
}

int open_door(long pid, int port) {
  return run_helper(pid, ErrorKind::egress_unavailable, "egress door: ",
                    [port](int userns, int netns, int channel) { child(userns, netns, port, channel); }, receive);
}

}  // namespace asbx
