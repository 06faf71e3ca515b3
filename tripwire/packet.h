// What arrives on the tripwire's device, read as data: one IPv4 or IPv6 packet the agent's
// kernel routed there (the namespace's only route out). Pure and total: any bytes give a Packet,
// and nothing past the input is read.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/address.h"

namespace asbx {

namespace ipproto {
constexpr std::uint8_t icmp = 1, tcp = 6, udp = 17, icmpv6 = 58;
}

namespace tcpflag {
constexpr std::uint8_t fin = 0x01, syn = 0x02, rst = 0x04, ack = 0x10;
}

struct Packet {
  bool ip = false;            // an IPv4 or IPv6 header that holds together
  IpAddress source, destination;
  std::uint8_t protocol = 0;  // the transport (after IPv6 extension headers)
  bool first_fragment = true; // false: a later fragment (no transport header in it)
  bool transport = false;     // the transport header below is complete
  std::size_t header_length = 0;  // IP header (+ extensions): where the transport starts
  std::size_t ip_length = 0;      // the packet as its header says (bounded by the input)
  std::uint16_t source_port = 0, destination_port = 0;  // TCP, UDP
  std::uint32_t seq = 0, ack = 0;                       // TCP
  std::uint8_t tcp_flags = 0;
  std::size_t payload_offset = 0, payload_length = 0;   // after the TCP/UDP header
  std::uint8_t icmp_type = 0, icmp_code = 0;            // ICMP, ICMPv6
};

Packet parse_packet(std::string_view bytes);

// Big-endian reads, bounds already checked by the caller.
inline std::uint16_t be16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(b[at]) << 8) | static_cast<unsigned char>(b[at + 1]));
}
inline std::uint32_t be32(std::string_view b, std::size_t at) {
  return (static_cast<std::uint32_t>(be16(b, at)) << 16) | be16(b, at + 2);
}

}  // namespace asbx
