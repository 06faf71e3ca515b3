#include "base/address.h"

#include <arpa/inet.h>
#include <cstring>

namespace asbx {
namespace {

IpAddress v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  IpAddress ip;
  ip.bytes = {a, b, c, d};
  return ip;
}

bool v4_in(const IpAddress& a, const IpAddress& base, int prefix) { return Cidr{base, prefix}.contains(a); }

std::string v4_range(const IpAddress& a) {
  struct Range { IpAddress base; int prefix; const char* name; };
  static const Range ranges[] = {
      {v4(0, 0, 0, 0), 8, "unspecified"},   {v4(127, 0, 0, 0), 8, "loopback"},
      {v4(10, 0, 0, 0), 8, "private"},      {v4(172, 16, 0, 0), 12, "private"},
      {v4(192, 168, 0, 0), 16, "private"},  {v4(100, 64, 0, 0), 10, "private"},  // carrier-grade NAT
      {v4(169, 254, 0, 0), 16, "link-local"}, {v4(192, 0, 0, 0), 24, "reserved"},
      {v4(198, 18, 0, 0), 15, "reserved"},  {v4(224, 0, 0, 0), 4, "multicast"},
      {v4(240, 0, 0, 0), 4, "reserved"},
  };
  for (const auto& r : ranges)
    if (v4_in(a, r.base, r.prefix)) return r.name;
  return "";
}

}  // namespace

std::string IpAddress::text() const {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof buf);
  return buf;
}

bool Cidr::contains(const IpAddress& a) const {
  if (a.v6 != base.v6) return false;
  int full = prefix / 8, rest = prefix % 8;
  if (std::memcmp(a.bytes.data(), base.bytes.data(), full) != 0) return false;
  if (rest == 0) return true;
  std::uint8_t mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (a.bytes[full] & mask) == (base.bytes[full] & mask);
}

std::string Cidr::text() const { return base.text() + "/" + std::to_string(prefix); }

std::optional<IpAddress> parse_ip(const std::string& text) {
  std::string t = text;
  if (t.size() > 2 && t.front() == '[' && t.back() == ']') t = t.substr(1, t.size() - 2);
  if (t.empty() || t.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  IpAddress ip;
  if (::inet_pton(AF_INET, t.c_str(), ip.bytes.data()) == 1) return ip;
  ip.v6 = true;
  if (::inet_pton(AF_INET6, t.c_str(), ip.bytes.data()) == 1) return ip;
  return std::nullopt;
}

std::optional<Cidr> parse_cidr(const std::string& text) {
  auto slash = text.find('/');
  auto ip = parse_ip(text.substr(0, slash));
  if (!ip) return std::nullopt;
  int max = ip->v6 ? 128 : 32;
  Cidr c{*ip, max};
  if (slash != std::string::npos) {
    std::string p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3 || p.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    c.prefix = std::stoi(p);
    if (c.prefix > max) return std::nullopt;
  }
  Cidr masked{IpAddress{ip->v6, {}}, c.prefix};
  for (int i = 0; i < 16; ++i) {
    int bits = std::min(8, std::max(0, c.prefix - 8 * i));
    masked.base.bytes[i] = static_cast<std::uint8_t>(ip->bytes[i] & (bits ? 0xff << (8 - bits) : 0));
  }
  if (masked.base != *ip) return std::nullopt;  // host bits set: the owner meant something else
  return c;
}

std::string non_public_range(const IpAddress& a) {
  if (!a.v6) return v4_range(a);
  static const std::array<std::uint8_t, 12> mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(mapped.begin(), mapped.end(), a.bytes.begin()))
    return v4_range(v4(a.bytes[12], a.bytes[13], a.bytes[14], a.bytes[15]));
  struct Range { const char* base; int prefix; const char* name; };
  static const Range ranges[] = {
      {"::", 128, "unspecified"}, {"::1", 128, "loopback"},  {"fc00::", 7, "private"},
      {"fe80::", 10, "link-local"}, {"ff00::", 8, "multicast"}, {"::", 96, "reserved"},  // v4-compatible
      {"64:ff9b::", 96, "reserved"}, {"2001:db8::", 32, "reserved"}, {"fec0::", 10, "reserved"},
  };
  for (const auto& r : ranges)
    if (Cidr{*parse_ip(r.base), r.prefix}.contains(a)) return r.name;
  return "";
}

}  // namespace asbx
