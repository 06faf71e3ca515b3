#include "tripwire/dns.h"

#include <cstdio>

#include "tripwire/packet.h"

namespace asbx {
namespace {

constexpr std::size_t kHeader = 12;
constexpr std::size_t kMaxName = 255;  // RFC 1035: the whole name on the wire

void append_label_byte(std::string& out, unsigned char c) {
  if (c > 0x20 && c < 0x7f && c != '.' && c != '\\') {
    out += static_cast<char>(c);
    return;
  }
  char esc[8];
  std::snprintf(esc, sizeof esc, "\\%03u", c);
  out += esc;
}

// The name starting at `at`; `at` moves past it. False on a pointer, a bad length or no end.
bool read_name(std::string_view m, std::size_t& at, std::string& name) {
  std::size_t wire = 0;
  while (at < m.size()) {
    unsigned char len = static_cast<unsigned char>(m[at++]);
    ++wire;
    if (len == 0) return true;
    if (len > 63) return false;  // a compression pointer (or a reserved kind): not in a query's name
    if (at + len > m.size() || (wire += len) > kMaxName) return false;
    if (!name.empty()) name += '.';
    for (std::size_t i = 0; i < len; ++i) append_label_byte(name, static_cast<unsigned char>(m[at + i]));
    at += len;
  }
  return false;
}

}  // namespace

std::optional<DnsQuery> parse_dns_query(std::string_view m) {
  if (m.size() < kHeader) return std::nullopt;
  DnsQuery q;
  q.id = be16(m, 0);
  q.flags = be16(m, 2);
  if ((q.flags & 0x8000) != 0 || ((q.flags >> 11) & 0xf) != 0 || be16(m, 4) == 0) return std::nullopt;
  std::size_t at = kHeader;
  if (!read_name(m, at, q.name) || at + 4 > m.size()) return std::nullopt;
  if (q.name.empty()) q.name = ".";
  q.type = be16(m, at);
  q.qclass = be16(m, at + 2);
  q.question_end = at + 4;
  return q;
}

std::string dns_refusal(std::string_view m, const DnsQuery& q) {
  std::string out(m.substr(0, q.question_end));
  std::uint16_t flags = static_cast<std::uint16_t>(0x8000 | (q.flags & 0x0100) | 5);  // QR, RD as asked, REFUSED
  out[2] = static_cast<char>(flags >> 8);
  out[3] = static_cast<char>(flags & 0xff);
  out[4] = 0, out[5] = 1;  // the first question only
  for (int i = 6; i < 12; ++i) out[i] = 0;
  return out;
}

std::string dns_type_name(std::uint16_t type) {
  switch (type) {
    case 1: return "A";
    case 2: return "NS";
    case 5: return "CNAME";
    case 6: return "SOA";
    case 12: return "PTR";
    case 15: return "MX";
    case 16: return "TXT";
    case 28: return "AAAA";
    case 33: return "SRV";
    case 64: return "SVCB";
    case 65: return "HTTPS";
    case 255: return "ANY";
  }
  return "TYPE" + std::to_string(type);
}

}  // namespace asbx
