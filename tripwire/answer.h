// What the tripwire makes of one packet from the agent's namespace: the attempt it records and
// the reply it writes back so the agent fails at once. Nothing is ever forwarded. Pure, total.
//   TCP SYN               → a reset (connect fails with ECONNREFUSED)
//   UDP to port 53, a DNS query → a DNS answer with RCODE REFUSED (the name is recorded)
//   other UDP             → ICMP port unreachable (a connected socket gets ECONNREFUSED)
//   ICMP echo request     → ICMP "administratively prohibited" (ping fails at once)
//   any other protocol    → ICMP "administratively prohibited"
// Never answered, never recorded: ICMP other than echo requests (the kernel's own: errors about
// a late reply, IPv6 neighbour discovery and listener reports; without CAP_NET_RAW the agent can
// send nothing else) and later fragments (the first one was the attempt). No ICMP error goes to
// a multicast or broadcast destination.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "base/address.h"

namespace asbx {

enum class AttemptKind { none, tcp, udp, icmp, dns, other };

struct Attempt {
  AttemptKind kind = AttemptKind::none;
  std::string protocol;   // "tcp", "udp", "icmp", "ip/N"
  IpAddress destination;
  int port = -1;          // TCP and UDP only
  std::string dns_name;   // kind dns
  std::string dns_type;   // kind dns: "A", "AAAA", ...
};

struct Answer {
  Attempt attempt;
  std::string reply;  // an IP packet to write back to the device; "" = none
};

Answer answer_packet(std::string_view bytes);

// One line's worth: "tcp connect to 10.0.0.1:80", "udp to [2001:db8::1]:9", "icmp echo to
// 10.0.0.1", "ip/132 to 10.0.0.1", "dns query for example.com (A)".
std::string describe(const Attempt& a);

// The Internet checksum (RFC 1071) of `bytes` added to `sum` (for pseudo-headers).
std::uint16_t internet_checksum(std::string_view bytes, std::uint32_t sum = 0);

}  // namespace asbx
