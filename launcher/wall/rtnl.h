// rtnetlink requests that set up the tripwire's device, each built in a fixed buffer on the
// stack: they run in a child forked from a launcher that may have threads, where only
// async-signal-safe calls are allowed (no allocation, no locks). Each returns 0 or an errno.
#pragma once

namespace asbx::rtnl {

int open_socket(int& fd);                                   // NETLINK_ROUTE, close-on-exec
int addr_gen_none(int nl, int ifindex);                     // no IPv6 link-local: nothing of its own is sent
int set_flags(int nl, int ifindex, unsigned flags, unsigned change);
int add_address(int nl, int ifindex, bool v6, const unsigned char* address, int prefix);
int add_default_route(int nl, int ifindex, bool v6);        // 0.0.0.0/0 or ::/0 through the device

}  // namespace asbx::rtnl
