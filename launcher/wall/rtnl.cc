#include "launcher/wall/rtnl.h"

#include <cerrno>
#include <cstring>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asbx::rtnl {
namespace {

// One request; every message here is well under the buffer (the largest is ~60 bytes).
class Request {
 public:
  Request(unsigned short type, unsigned short flags) {
    std::memset(buf_, 0, sizeof buf_);
    head()->nlmsg_len = NLMSG_LENGTH(0);
    head()->nlmsg_type = type;
    head()->nlmsg_flags = static_cast<unsigned short>(NLM_F_REQUEST | NLM_F_ACK | flags);
  }
  void put(const void* data, unsigned len) {
    unsigned at = NLMSG_ALIGN(head()->nlmsg_len);
    if (at + len > sizeof buf_) return;
    std::memcpy(buf_ + at, data, len);
    head()->nlmsg_len = at + len;
  }
  rtattr* attr(unsigned short type, const void* data, unsigned len) {
    unsigned at = NLMSG_ALIGN(head()->nlmsg_len);
    if (at + RTA_LENGTH(len) > sizeof buf_) return nullptr;
    auto* a = reinterpret_cast<rtattr*>(buf_ + at);
    a->rta_type = type;
    a->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
    if (len) std::memcpy(RTA_DATA(a), data, len);
    head()->nlmsg_len = at + RTA_ALIGN(a->rta_len);
    return a;
  }
  void close_nest(rtattr* nest) {
    if (nest) nest->rta_len = static_cast<unsigned short>(buf_ + head()->nlmsg_len - reinterpret_cast<char*>(nest));
  }
  int send_to(int nl) {
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(nl, buf_, head()->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) return errno;
    alignas(nlmsghdr) char reply[1024];
    ssize_t n = ::recv(nl, reply, sizeof reply, 0);
    if (n < 0) return errno;
    auto* h = reinterpret_cast<nlmsghdr*>(reply);
    if (!NLMSG_OK(h, static_cast<unsigned>(n)) || h->nlmsg_type != NLMSG_ERROR) return EPROTO;
    int err = reinterpret_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
    return err < 0 ? -err : err;
  }

 private:
  nlmsghdr* head() { return reinterpret_cast<nlmsghdr*>(buf_); }
  alignas(nlmsghdr) char buf_[256];
};

}  // namespace

int open_socket(int& fd) {
  fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  return fd < 0 ? errno : 0;
}

int addr_gen_none(int nl, int ifindex) {
  Request r(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  r.put(&ifi, sizeof ifi);
  rtattr* spec = r.attr(IFLA_AF_SPEC, nullptr, 0);
  rtattr* inet6 = r.attr(AF_INET6, nullptr, 0);
  unsigned char mode = IN6_ADDR_GEN_MODE_NONE;
  r.attr(IFLA_INET6_ADDR_GEN_MODE, &mode, 1);
  r.close_nest(inet6);
  r.close_nest(spec);
  return r.send_to(nl);
}

int set_flags(int nl, int ifindex, unsigned flags, unsigned change) {
  Request r(RTM_NEWLINK, 0);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  ifi.ifi_flags = flags;
  ifi.ifi_change = change;
  r.put(&ifi, sizeof ifi);
  return r.send_to(nl);
}

int add_address(int nl, int ifindex, bool v6, const unsigned char* address, int prefix) {
  Request r(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
  ifaddrmsg ifa{};
  ifa.ifa_family = v6 ? AF_INET6 : AF_INET;
  ifa.ifa_prefixlen = static_cast<unsigned char>(prefix);
  ifa.ifa_flags = v6 ? IFA_F_NODAD : 0;  // usable at once (no duplicate detection on a point-to-point device)
  ifa.ifa_scope = RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<unsigned>(ifindex);
  r.put(&ifa, sizeof ifa);
  unsigned len = v6 ? 16 : 4;
  r.attr(IFA_LOCAL, address, len);
  r.attr(IFA_ADDRESS, address, len);
  return r.send_to(nl);
}

int add_default_route(int nl, int ifindex, bool v6) {
  Request r(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
  rtmsg rt{};
  rt.rtm_family = v6 ? AF_INET6 : AF_INET;
  rt.rtm_table = RT_TABLE_MAIN;
  rt.rtm_protocol = RTPROT_BOOT;
  rt.rtm_scope = v6 ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;  // v4: on-link, like `ip route add default dev X`
  rt.rtm_type = RTN_UNICAST;
  r.put(&rt, sizeof rt);
  unsigned oif = static_cast<unsigned>(ifindex);
  r.attr(RTA_OIF, &oif, sizeof oif);
  return r.send_to(nl);
}

}  // namespace asbx::rtnl
