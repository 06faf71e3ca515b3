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

std::vector<MaskedValue> blocks_outside(const std::vector<std::uint64_t>& allowed, std::uint64_t limit) {
  auto free_range = [&](std::uint64_t from, std::uint64_t size) {
    return std::none_of(allowed.begin(), allowed.end(), [&](std::uint64_t a) { return a >= from && a < from + size; });
  };
  std::vector<MaskedValue> out;
  for (std::uint64_t v = 0; v < limit;) {
    if (!free_range(v, 1)) {
      ++v;
      continue;
    }
    std::uint64_t size = 1;
    while (v % (size * 2) == 0 && v + size * 2 <= limit && free_range(v, size * 2)) size *= 2;
    out.push_back({v, ~(size - 1)});
    v += size;
  }
  return out;
}

// Measured: nothing in the workload or the CLIs sets either (docs/DECISIONS.md "the second pass").
const std::vector<SockoptRefused>& sockopts_refused() {
  static const std::vector<SockoptRefused> rows = {
      {IPPROTO_TCP, 31, "TCP_ULP"},     // kTLS and other upper-layer protocols (CVE-2023-0461)
      {IPPROTO_UDP, 100, "UDP_ENCAP"},  // ESP-in-UDP, L2TP: the xfrm input path
  };
  return rows;
}

int msg_flags_index(const std::string& call) { return call == "sendmsg" || call == "recvmsg" ? 2 : 3; }

}  // namespace asbx
