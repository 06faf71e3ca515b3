// A DNS query as the tripwire reads it from a UDP datagram the agent sent to port 53, and the
// refusal it answers with. Pure and total: any bytes are read as data, never past the input.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asbx {

struct DnsQuery {
  std::uint16_t id = 0;
  std::uint16_t flags = 0;
  std::string name;            // dotted, printable: other bytes, '.' and '\' in a label as \DDD
  std::uint16_t type = 0, qclass = 0;
  std::size_t question_end = 0;  // the header and the first question, as sent
};

// A standard query (QR = 0, opcode 0) with at least one question whose name is made of plain
// labels (no compression pointer); nullopt otherwise.
std::optional<DnsQuery> parse_dns_query(std::string_view message);

// The answer: the same id and question, QR set, RD copied, RCODE 5 (REFUSED), no records.
std::string dns_refusal(std::string_view message, const DnsQuery& query);

// "A", "AAAA", "TXT", ... or "TYPE<n>".
std::string dns_type_name(std::uint16_t type);

}  // namespace asbx
