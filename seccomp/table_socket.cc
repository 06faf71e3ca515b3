// The socket parts of seccomp/table.h: AF_INET/AF_INET6 by type and protocol, and the flags index
// of the send/recv calls (docs/DECISIONS.md, "Issue 34: socket rules").
#include <algorithm>
#include <netinet/in.h>
#include <sys/socket.h>

#include "seccomp/table.h"

namespace asbx {

// Measured: the CLIs' e2e tests, git, node, npm, bun, python, perl and Go programs open stream
// sockets with protocol 0 or TCP and datagram sockets with 0 or UDP; ping (the tripwire's ICMP
// echo sockets, net.ipv4.ping_group_range) opens datagram ICMP/ICMPv6.
const std::vector<InetProtocols>& inet_protocols_allowed() {
  static const std::vector<InetProtocols> rows = {
      {AF_INET, SOCK_STREAM, {0, IPPROTO_TCP}},
      {AF_INET, SOCK_DGRAM, {0, IPPROTO_UDP, IPPROTO_ICMP}},
      {AF_INET6, SOCK_STREAM, {0, IPPROTO_TCP}},
      {AF_INET6, SOCK_DGRAM, {0, IPPROTO_UDP, IPPROTO_ICMPV6}},
  };
  return rows;
}

bool inet_family(int family) { return family == AF_INET || family == AF_INET6; }

std::vector<MaskedValue> blocks_outside(const std::vector<int>& allowed, int limit) {
  auto free_range = [&](int from, int size) {
    return std::none_of(allowed.begin(), allowed.end(), [&](int a) { return a >= from && a < from + size; });
  };
  std::vector<MaskedValue> out;
  for (int v = 0; v < limit;) {
    if (!free_range(v, 1)) {
      ++v;
      continue;
    }
    int size = 1;
    while (v % (size * 2) == 0 && v + size * 2 <= limit && free_range(v, size * 2)) size *= 2;
    out.push_back({std::uint64_t(v), ~std::uint64_t(size - 1)});
    v += size;
  }
  return out;
}

int msg_flags_index(const std::string& call) { return call == "sendmsg" || call == "recvmsg" ? 2 : 3; }

}  // namespace asbx
