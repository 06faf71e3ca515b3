#include "tripwire/answer.h"

#include "tripwire/dns.h"
#include "tripwire/packet.h"

namespace asbx {
namespace {

constexpr std::size_t kV4Quote = 576 - 28;   // RFC 1812: an ICMP error fits 576 bytes
constexpr std::size_t kV6Quote = 1280 - 48;  // RFC 4443: ... and 1280 for ICMPv6
constexpr std::uint8_t kHopLimit = 64;

void put16(std::string& s, std::size_t at, std::uint16_t v) {
  s[at] = static_cast<char>(v >> 8);
  s[at + 1] = static_cast<char>(v & 0xff);
}

void put32(std::string& s, std::size_t at, std::uint32_t v) {
  put16(s, at, static_cast<std::uint16_t>(v >> 16));
  put16(s, at + 2, static_cast<std::uint16_t>(v & 0xffff));
}

std::string_view address_bytes(const IpAddress& a) {
  return {reinterpret_cast<const char*>(a.bytes.data()), a.v6 ? 16u : 4u};
}

std::uint32_t word_sum(std::string_view b) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < b.size(); i += 2) sum += be16(b, i);
  if (b.size() % 2) sum += static_cast<std::uint32_t>(static_cast<unsigned char>(b.back())) << 8;
  return sum;
}

std::uint32_t pseudo_header_sum(const IpAddress& src, const IpAddress& dst, std::uint8_t proto, std::size_t length) {
  return word_sum(address_bytes(src)) + word_sum(address_bytes(dst)) + proto +
         static_cast<std::uint32_t>(length >> 16) + static_cast<std::uint32_t>(length & 0xffff);
}

// An IP packet from `src` to `dst` carrying `body`, whose checksum field at `checksum_at` is
// filled in (ICMPv4's covers the message only; the others add the pseudo-header).
std::string ip_packet(const IpAddress& src, const IpAddress& dst, std::uint8_t proto, std::string body,
                      std::size_t checksum_at) {
  bool pseudo = dst.v6 || proto != ipproto::icmp;
  std::uint16_t sum = internet_checksum(body, pseudo ? pseudo_header_sum(src, dst, proto, body.size()) : 0);
  if (proto == ipproto::udp && sum == 0) sum = 0xffff;
  put16(body, checksum_at, sum);
  std::string h;
  if (dst.v6) {
    h.assign(40, '\0');
    h[0] = 0x60;
    put16(h, 4, static_cast<std::uint16_t>(body.size()));
    h[6] = static_cast<char>(proto);
    h[7] = static_cast<char>(kHopLimit);
    h.replace(8, 16, address_bytes(src));
    h.replace(24, 16, address_bytes(dst));
  } else {
    h.assign(20, '\0');
    h[0] = 0x45;
    put16(h, 2, static_cast<std::uint16_t>(20 + body.size()));
    put16(h, 6, 0x4000);  // don't fragment
    h[8] = static_cast<char>(kHopLimit);
    h[9] = static_cast<char>(proto);
    h.replace(12, 4, address_bytes(src));
    h.replace(16, 4, address_bytes(dst));
    put16(h, 10, internet_checksum(h));
  }
  return h + body;
}

bool multicast_or_broadcast(const IpAddress& a) {
  if (a.v6) return a.bytes[0] == 0xff;
  return (a.bytes[0] & 0xf0) == 0xe0 || (a.bytes[0] == 255 && a.bytes[1] == 255 && a.bytes[2] == 255 && a.bytes[3] == 255);
}

// Only an echo request is the agent reaching out (all an unprivileged ping socket sends); the
// rest is the kernel's own: errors about our replies, neighbour discovery, listener reports.
bool kernel_icmp(const Packet& p) { return p.icmp_type != (p.destination.v6 ? 128 : 8); }

// From the address the agent tried: type/code per version (v4, v6).
std::string icmp_error(std::string_view in, const Packet& p, bool port_unreachable) {
  if (multicast_or_broadcast(p.destination)) return "";
  bool v6 = p.destination.v6;
  std::uint8_t type = v6 ? 1 : 3;
  std::uint8_t code = port_unreachable ? (v6 ? 4 : 3) : (v6 ? 1 : 13);
  std::string body(8, '\0');
  body[0] = static_cast<char>(type);
  body[1] = static_cast<char>(code);
  body += in.substr(0, std::min(p.ip_length, v6 ? kV6Quote : kV4Quote));
  return ip_packet(p.destination, p.source, v6 ? ipproto::icmpv6 : ipproto::icmp, body, 2);
}

// RFC 9293 3.10.7.1: a SYN gets <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; a segment with ACK
// gets <SEQ=SEG.ACK><CTL=RST>. A reset is never answered.
std::string tcp_reset(const Packet& p) {
  if (p.tcp_flags & tcpflag::rst) return "";
  std::string t(20, '\0');
  put16(t, 0, p.destination_port);
  put16(t, 2, p.source_port);
  t[12] = 0x50;
  if (p.tcp_flags & tcpflag::ack) {
    put32(t, 4, p.ack);
    t[13] = static_cast<char>(tcpflag::rst);
  } else {
    std::uint32_t len = static_cast<std::uint32_t>(p.payload_length) + ((p.tcp_flags & tcpflag::syn) ? 1 : 0) +
                        ((p.tcp_flags & tcpflag::fin) ? 1 : 0);
    put32(t, 8, p.seq + len);
    t[13] = static_cast<char>(tcpflag::rst | tcpflag::ack);
  }
  return ip_packet(p.destination, p.source, ipproto::tcp, t, 16);
}

std::string udp_reply(const Packet& p, const std::string& payload) {
  std::string u(8, '\0');
  put16(u, 0, p.destination_port);
  put16(u, 2, p.source_port);
  put16(u, 4, static_cast<std::uint16_t>(8 + payload.size()));
  return ip_packet(p.destination, p.source, ipproto::udp, u + payload, 6);
}

Attempt attempt_of(const Packet& p, AttemptKind kind, const char* protocol) {
  Attempt a;
  a.kind = kind;
  a.protocol = protocol;
  a.destination = p.destination;
  if (kind == AttemptKind::tcp || kind == AttemptKind::udp || kind == AttemptKind::dns) a.port = p.destination_port;
  return a;
}

Answer answer_udp(std::string_view in, const Packet& p) {
  std::string_view payload = in.substr(p.payload_offset, p.payload_length);
  if (p.destination_port == 53) {
    if (auto q = parse_dns_query(payload)) {
      Answer out{attempt_of(p, AttemptKind::dns, "udp"), udp_reply(p, dns_refusal(payload, *q))};
      out.attempt.dns_name = q->name;
      out.attempt.dns_type = dns_type_name(q->type);
      return out;
    }
  }
  return {attempt_of(p, AttemptKind::udp, "udp"), icmp_error(in, p, true)};
}

}  // namespace

std::uint16_t internet_checksum(std::string_view bytes, std::uint32_t sum) {
  std::uint64_t s = static_cast<std::uint64_t>(sum) + word_sum(bytes);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<std::uint16_t>(~s & 0xffff);
}

Answer answer_packet(std::string_view in) {
  Packet p = parse_packet(in);
  if (!p.ip) return {};
  if (p.protocol == ipproto::tcp && p.transport) {
    Answer out{{}, tcp_reset(p)};
    if ((p.tcp_flags & (tcpflag::syn | tcpflag::ack | tcpflag::rst)) == tcpflag::syn)
      out.attempt = attempt_of(p, AttemptKind::tcp, "tcp");
    return out;
  }
  if (p.protocol == ipproto::udp && p.transport) return answer_udp(in, p);
  if (p.protocol == ipproto::tcp || p.protocol == ipproto::udp) return {};  // a later fragment
  bool icmp = p.protocol == (p.destination.v6 ? ipproto::icmpv6 : ipproto::icmp);
  if (icmp && (!p.transport || kernel_icmp(p))) return {};
  if (icmp) return {attempt_of(p, AttemptKind::icmp, "icmp"), icmp_error(in, p, false)};
  if (!p.first_fragment) return {};  // the first fragment was the attempt
  Answer out{attempt_of(p, AttemptKind::other, ""), icmp_error(in, p, false)};
  out.attempt.protocol = "ip/" + std::to_string(p.protocol);
  return out;
}

std::string describe(const Attempt& a) {
  std::string host = a.destination.text();
  std::string hostport = (a.destination.v6 ? "[" + host + "]" : host) + ":" + std::to_string(a.port);
  switch (a.kind) {
    case AttemptKind::tcp: return "tcp connect to " + hostport;
    case AttemptKind::udp: return "udp to " + hostport;
    case AttemptKind::icmp: return "icmp echo to " + host;
    case AttemptKind::dns: return "dns query for " + a.dns_name + " (" + a.dns_type + ")";
    case AttemptKind::other: return a.protocol + " to " + host;
    case AttemptKind::none: break;
  }
  return "";
}

}  // namespace asbx
