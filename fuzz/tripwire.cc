// The tripwire's parsers of what the agent's namespace sends (tripwire/packet.cc, dns.cc,
// answer.cc) and the record it feeds (tally.cc). All total: never throw, never read past the
// input. Properties: a reply is an IP packet to the input's source from its destination, with a
// transport checksum that verifies, of at most 1280 bytes; an attempt has a destination and a
// protocol; a DNS query's question lies within the message and its name is printable; the
// record stays JSON (its names are the agent's bytes).
#include "fuzz/fuzz.h"
#include "tripwire/answer.h"
#include "tripwire/dns.h"
#include "tripwire/packet.h"
#include "tripwire/tally.h"

namespace {

using asbx::fuzz::violated;

std::uint32_t pseudo_sum(const asbx::Packet& p, std::size_t len) {
  std::string h(reinterpret_cast<const char*>(p.source.bytes.data()), p.source.v6 ? 16 : 4);
  h.append(reinterpret_cast<const char*>(p.destination.bytes.data()), p.destination.v6 ? 16 : 4);
  h += {static_cast<char>(len >> 24), static_cast<char>(len >> 16), static_cast<char>(len >> 8), static_cast<char>(len),
        0, 0, 0, static_cast<char>(p.protocol)};
  return static_cast<std::uint16_t>(~asbx::internet_checksum(h));
}

void check_reply(const asbx::Packet& in, const std::string& reply) {
  if (reply.empty()) return;
  asbx::Packet r = asbx::parse_packet(reply);
  if (!r.ip || r.ip_length != reply.size() || reply.size() > 1280) violated("reply is not one IP packet within 1280 bytes");
  if (!(r.destination == in.source) || !(r.source == in.destination)) violated("reply not back to the sender");
  std::string seg = reply.substr(r.header_length);
  bool pseudo = r.destination.v6 || r.protocol != asbx::ipproto::icmp;
  if (asbx::internet_checksum(seg, pseudo ? pseudo_sum(r, seg.size()) : 0) != 0) violated("reply checksum");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = asbx::fuzz::text(data, size);
  asbx::Packet in = asbx::parse_packet(bytes);
  if (in.ip && (in.ip_length > bytes.size() || in.header_length > in.ip_length)) violated("lengths past the input");
  if (in.transport && in.payload_offset + in.payload_length > in.ip_length) violated("payload past the packet");
  asbx::Answer a = asbx::answer_packet(bytes);
  check_reply(in, a.reply);
  if (a.attempt.kind != asbx::AttemptKind::none && (a.attempt.protocol.empty() || asbx::describe(a.attempt).empty()))
    violated("an attempt without a protocol");
  if (auto q = asbx::parse_dns_query(bytes)) {
    if (q->question_end > bytes.size() || q->name.empty()) violated("question past the message");
    for (unsigned char c : q->name)
      if (c < 0x21 || c > 0x7e) violated("unprintable name byte");
    if (asbx::dns_refusal(bytes, *q).size() != q->question_end) violated("refusal size");
  }
  asbx::TripwireTally tally;
  tally.attempt(a.attempt, 1);
  try {
    (void)tally.json(true, true).dump();
  } catch (const nlohmann::json::exception&) {
    violated("record is not JSON");
  }
  return 0;
}
