#include "tripwire/packet.h"

#include <cstring>

namespace asbx {
namespace {

constexpr std::size_t kMaxExtensionHeaders = 8;

IpAddress address(std::string_view b, std::size_t at, bool v6) {
  IpAddress a;
  a.v6 = v6;
  std::memcpy(a.bytes.data(), b.data() + at, v6 ? 16 : 4);
  return a;
}

bool parse_v4(std::string_view b, Packet& p) {
  if (b.size() < 20) return false;
  std::size_t ihl = static_cast<std::size_t>(b[0] & 0x0f) * 4;
  std::size_t total = be16(b, 2);
  if (ihl < 20 || total < ihl || total > b.size()) return false;
  p.header_length = ihl;
  p.ip_length = total;
  p.protocol = static_cast<std::uint8_t>(b[9]);
  p.first_fragment = (be16(b, 6) & 0x1fff) == 0;
  p.source = address(b, 12, false);
  p.destination = address(b, 16, false);
  return true;
}

bool is_extension(std::uint8_t next) { return next == 0 || next == 43 || next == 44 || next == 60; }

// Hop-by-hop, routing, fragment and destination options are walked; anything else is the
// transport (59, "no next header", included).
bool parse_v6(std::string_view b, Packet& p) {
  if (b.size() < 40) return false;
  std::size_t total = 40 + static_cast<std::size_t>(be16(b, 4));
  if (total > b.size()) return false;
  p.ip_length = total;
  p.source = address(b, 8, true);
  p.destination = address(b, 24, true);
  std::uint8_t next = static_cast<std::uint8_t>(b[6]);
  std::size_t at = 40;
  for (std::size_t n = 0; is_extension(next); ++n) {
    if (n == kMaxExtensionHeaders || at + 8 > total) return false;
    std::size_t len = next == 44 ? 8 : (static_cast<std::size_t>(static_cast<unsigned char>(b[at + 1])) + 1) * 8;
    if (next == 44 && (be16(b, at + 2) & 0xfff8) != 0) p.first_fragment = false;
    next = static_cast<std::uint8_t>(b[at]);
    at += len;
    if (at > total) return false;
  }
  p.header_length = at;
  p.protocol = next;
  return true;
}

void parse_transport(std::string_view b, Packet& p) {
  std::size_t at = p.header_length, room = p.ip_length - at;
  if (!p.first_fragment) return;
  if (p.protocol == ipproto::tcp && room >= 20) {
    std::size_t offset = static_cast<std::size_t>(static_cast<unsigned char>(b[at + 12]) >> 4) * 4;
    if (offset < 20 || offset > room) return;
    p.source_port = be16(b, at);
    p.destination_port = be16(b, at + 2);
    p.seq = be32(b, at + 4);
    p.ack = be32(b, at + 8);
    p.tcp_flags = static_cast<std::uint8_t>(b[at + 13]);
    p.payload_offset = at + offset;
    p.payload_length = room - offset;
    p.transport = true;
  } else if (p.protocol == ipproto::udp && room >= 8) {
    p.source_port = be16(b, at);
    p.destination_port = be16(b, at + 2);
    std::size_t len = be16(b, at + 4);
    if (len < 8 || len > room) return;
    p.payload_offset = at + 8;
    p.payload_length = len - 8;
    p.transport = true;
  } else if (p.protocol == (p.destination.v6 ? ipproto::icmpv6 : ipproto::icmp) && room >= 4) {
    p.icmp_type = static_cast<std::uint8_t>(b[at]);
    p.icmp_code = static_cast<std::uint8_t>(b[at + 1]);
    p.payload_offset = at + 4;
    p.payload_length = room - 4;
    p.transport = true;
  }
}

}  // namespace

Packet parse_packet(std::string_view bytes) {
  Packet p;
  if (bytes.empty()) return p;
  int version = static_cast<unsigned char>(bytes[0]) >> 4;
  bool ok = version == 4 ? parse_v4(bytes, p) : version == 6 ? parse_v6(bytes, p) : false;
  if (!ok) return Packet{};
  p.ip = true;
  parse_transport(bytes, p);
  return p;
}

}  // namespace asbx
