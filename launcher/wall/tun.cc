#include "launcher/wall/tun.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/wall/helper_channel.h"
#include "launcher/wall/rtnl.h"

namespace asbx {
namespace {

enum Step {
  enter_user, enter_net, open_tun, create_device, find_index, open_rtnl, no_link_local, bring_up,
  address4, address6, route4, route6, pass_back, kSteps
};
const char* const kStepNames[kSteps] = {
    "enter the container's user namespace", "enter the container's network namespace", "open /dev/net/tun",
    "create the device", "find the device's index", "open an rtnetlink socket",
    "turn off the device's IPv6 link-local address", "bring the device up", "give the device its IPv4 address",
    "give the device its IPv6 address", "route IPv4 to the device", "route IPv6 to the device",
    "pass the device back"};

// 192.0.0.8 and fd61:7362:7877::1 as bytes (tun.h names them).
const unsigned char kAddress4[4] = {192, 0, 0, 8};
const unsigned char kAddress6[16] = {0xfd, 0x61, 0x73, 0x62, 0x78, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

[[noreturn]] void fail(const std::string& why) { throw Error(ErrorKind::tripwire, "tripwire: " + why); }

// The device, configured; the child's steps as errnos. IPv6 steps tolerate a kernel without
// IPv6 (EAFNOSUPPORT): then nothing of the agent can go out over IPv6 either.
int configure(int channel, int tun, int ifindex) {
  int nl = -1;
  if (int e = rtnl::open_socket(nl)) helper_fails(channel, open_rtnl, e);
  bool v6 = true;
  if (int e = rtnl::addr_gen_none(nl, ifindex)) {
    if (e != EAFNOSUPPORT) helper_fails(channel, no_link_local, e);
    v6 = false;
  }
  if (int e = rtnl::set_flags(nl, ifindex, IFF_UP, IFF_UP | IFF_MULTICAST)) helper_fails(channel, bring_up, e);
  if (int e = rtnl::add_address(nl, ifindex, false, kAddress4, 32)) helper_fails(channel, address4, e);
  if (v6)
    if (int e = rtnl::add_address(nl, ifindex, true, kAddress6, 128)) helper_fails(channel, address6, e);
  if (int e = rtnl::add_default_route(nl, ifindex, false)) helper_fails(channel, route4, e);
  if (v6)
    if (int e = rtnl::add_default_route(nl, ifindex, true)) helper_fails(channel, route6, e);
  ::close(nl);
  return tun;
}

void send_fd(int channel, int fd) {
  if (!helper_send_fd(channel, fd)) helper_fails(channel, pass_back, errno);
}

// Only async-signal-safe calls: the launcher may have threads when it forks.
[[noreturn]] void child(int userns, int netns, int channel) {
  if (userns >= 0 && ::setns(userns, CLONE_NEWUSER) != 0) helper_fails(channel, enter_user, errno);
  if (::setns(netns, CLONE_NEWNET) != 0) helper_fails(channel, enter_net, errno);
  int tun = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (tun < 0) helper_fails(channel, open_tun, errno);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, kTripwireDevice, IFNAMSIZ - 1);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  if (::ioctl(tun, TUNSETIFF, &ifr) != 0) helper_fails(channel, create_device, errno);
  int probe = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (probe < 0 || ::ioctl(probe, SIOCGIFINDEX, &ifr) != 0) helper_fails(channel, find_index, errno);
  ::close(probe);
  send_fd(channel, configure(channel, tun, ifr.ifr_ifindex));
  ::_exit(0);
}

// The device's fd, or throws with the child's reason.
int receive(int channel) {
  HelperAnswer a = helper_answer(channel, 10'000);
  if (a.timed_out) fail("the helper did not answer within 10 s");
  if (a.fd >= 0) return a.fd;
  if (a.failed) {
    HelperFailure f = a.failure;
    if (f.step < 0 || f.step >= kSteps) fail("the helper exited without the device");
    std::string why = std::string("cannot ") + kStepNames[f.step] + ": " + std::strerror(f.err);
    if (f.step == open_tun && (f.err == EACCES || f.err == EPERM)) why += " (it must be usable by this user: mode 0666, as udev sets it)";
    fail(why);
  }
  fail("the helper exited without the device");
}

}  // namespace

int open_tripwire_device(long pid) {
  return run_helper(pid, ErrorKind::tripwire, "tripwire: ",
                    [](int userns, int netns, int channel) { child(userns, netns, channel); }, receive);
}

}  // namespace asbx
