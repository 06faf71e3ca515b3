// IP addresses as the egress wall sees them: literals, CIDR ranges, and which ranges are not
// the public internet (loopback, private, link-local, ...). Pure.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace asbx {

struct IpAddress {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  // v4 uses the first 4
  std::string text() const;
  bool operator==(const IpAddress&) const = default;
};

struct Cidr {
  IpAddress base;
  int prefix = 0;
  bool contains(const IpAddress& a) const;
  std::string text() const;
  bool operator==(const Cidr&) const = default;
};

// A literal IPv4 or IPv6 address (brackets allowed around IPv6), or nullopt.
std::optional<IpAddress> parse_ip(const std::string& text);
// "ADDR/PREFIX" or a bare address (= a /32 or /128); nullopt when malformed or host bits set.
std::optional<Cidr> parse_cidr(const std::string& text);
// "" for a public address; otherwise the range it lies in: "loopback", "private",
// "link-local", "unspecified", "multicast", "reserved" (v4-mapped v6 addresses are judged as v4).
std::string non_public_range(const IpAddress& a);

}  // namespace asbx
