// The tripwire's pure parts: the packet and DNS parsers, the answers (resets, refusals, ICMP
// errors with checksums that verify), the bounded record, the decoy policy and the seat keys.
#include <doctest/doctest.h>

#include <regex>

#include "base/error.h"
#include "base/request.h"
#include "launcher/wall/tun.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "tripwire/answer.h"
#include "tripwire/canaries.h"
#include "tripwire/dns.h"
#include "tripwire/packet.h"
#include "tripwire/tally.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;

namespace {

std::string bytes(std::initializer_list<int> v) {
  std::string s;
  for (int b : v) s += static_cast<char>(b);
  return s;
}
std::string u16(unsigned v) { return bytes({int(v >> 8), int(v & 0xff)}); }
std::string u32(unsigned v) { return u16(v >> 16) + u16(v & 0xffff); }

IpAddress ip(const std::string& text) { return *parse_ip(text); }
std::string raw(const IpAddress& a) { return std::string(reinterpret_cast<const char*>(a.bytes.data()), a.v6 ? 16 : 4); }

std::uint32_t pseudo(const IpAddress& s, const IpAddress& d, int proto, std::size_t len) {
  std::string p = raw(s) + raw(d) + u32(static_cast<unsigned>(len)) + bytes({0, 0, 0, proto});
  return static_cast<std::uint16_t>(~internet_checksum(p));
}

// An IP packet; the transport's checksum at `at` filled in (-1: none).
std::string packet(const std::string& src, const std::string& dst, int proto, std::string body, int at = -1) {
  IpAddress s = ip(src), d = ip(dst);
  if (at >= 0) {
    bool ph = d.v6 || proto != 1;
    std::uint16_t c = internet_checksum(body, ph ? pseudo(s, d, proto, body.size()) : 0);
    body[at] = char(c >> 8), body[at + 1] = char(c & 0xff);
  }
  if (d.v6) return bytes({0x60, 0, 0, 0}) + u16(unsigned(body.size())) + bytes({proto, 64}) + raw(s) + raw(d) + body;
  std::string h = bytes({0x45, 0}) + u16(unsigned(20 + body.size())) + bytes({0, 0, 0x40, 0, 64, proto, 0, 0}) + raw(s) + raw(d);
  std::uint16_t c = internet_checksum(h);
  h[10] = char(c >> 8), h[11] = char(c & 0xff);
  return h + body;
}

std::string tcp(unsigned sport, unsigned dport, unsigned seq, unsigned ack, int flags, const std::string& data = "") {
  return u16(sport) + u16(dport) + u32(seq) + u32(ack) + bytes({0x50, flags}) + u16(64240) + u16(0) + u16(0) + data;
}
std::string udp(unsigned sport, unsigned dport, const std::string& payload) {
  return u16(sport) + u16(dport) + u16(unsigned(8 + payload.size())) + u16(0) + payload;
}
std::string dns_query(const std::string& name, unsigned type, unsigned id = 0x1234) {
  std::string q = u16(id) + u16(0x0100) + u16(1) + u16(0) + u16(0) + u16(0);
  std::size_t at = 0;
  for (std::size_t dot; (dot = name.find('.', at)) != std::string::npos || at < name.size(); at = dot + 1) {
    if (dot == std::string::npos) dot = name.size();
    q += char(dot - at) + name.substr(at, dot - at);
  }
  return q + std::string(1, '\0') + u16(type) + u16(1);
}

// The reply's transport checksum verifies (0 over the segment and its pseudo-header).
bool checksum_ok(const std::string& reply) {
  Packet p = parse_packet(reply);
  std::string seg = reply.substr(p.header_length, p.ip_length - p.header_length);
  bool ph = p.destination.v6 || p.protocol != 1;
  return p.ip && internet_checksum(seg, ph ? pseudo(p.source, p.destination, p.protocol, seg.size()) : 0) == 0;
}

SeatConfig seat_from(const std::string& text) { return parse_seat_config(text, "seat.toml", root_user()); }

LaunchPlan plan_with(const std::string& seat_text, const std::string& network = "") {
  Request r;
  r.id = "tw-unit";
  r.argv = {"true"};
  if (!network.empty()) r.network = network;
  SessionFacts f;
  f.now_unix = 1700000000;
  return build_plan(r, seat_from("socket = \"/s.sock\"\n" + seat_text), root_user(), f);
}

}  // namespace

TEST_CASE("tripwire packets: IPv4 and IPv6 headers, ports, extension headers, fragments; garbage is no packet") {
  Packet p = parse_packet(packet("192.0.0.8", "10.77.3.2", 6, tcp(40000, 80, 1000, 0, 0x02)));
  CHECK(p.ip);
  CHECK(p.transport);
  CHECK(p.destination.text() == "10.77.3.2");
  CHECK((p.source_port == 40000 && p.destination_port == 80 && p.seq == 1000 && p.tcp_flags == 0x02));
  // hop-by-hop (8 bytes) then UDP
  std::string v6 = packet("fd61:7362:7877::1", "2001:db8::9", 0, bytes({17, 0, 1, 4, 0, 0, 0, 0}) + udp(5000, 9, "x"));
  p = parse_packet(v6);
  CHECK((p.ip && p.protocol == 17 && p.header_length == 48 && p.destination_port == 9 && p.payload_length == 1));
  std::string later = packet("192.0.0.8", "10.0.0.1", 17, udp(1, 2, "abc"));
  later[6] = 0x00, later[7] = 0x10;  // fragment offset 16
  p = parse_packet(later);
  CHECK((p.ip && !p.first_fragment && !p.transport));
  for (std::string junk : {std::string(), std::string("\x45"), std::string(19, '\x45'), bytes({0x45, 0, 0xff, 0xff}) + std::string(16, 0),
                           std::string(40, '\x60'), std::string("\x70garbage")})
    CHECK_FALSE(parse_packet(junk).ip);
  std::string ext_loop = packet("fd61:7362:7877::1", "2001:db8::9", 0, std::string(80, '\0'));
  CHECK_FALSE(parse_packet(ext_loop).ip);  // nine hop-by-hop headers: past the walk's bound
}

TEST_CASE("tripwire dns: a query's name and type; pointers, responses and odd bytes") {
  auto q = parse_dns_query(dns_query("Exfil.Example.com", 28));
  REQUIRE(q);
  CHECK((q->name == "Exfil.Example.com" && q->type == 28 && dns_type_name(q->type) == "AAAA"));
  CHECK(parse_dns_query(dns_query("a", 1))->question_end == 12 + 3 + 4);
  std::string odd = dns_query("x", 16);
  odd[13] = '.';  // a dot inside a label
  CHECK(parse_dns_query(odd)->name == "\\046");
  std::string pointer = dns_query("a.b", 1).substr(0, 12) + bytes({0xc0, 0x0c, 0, 1, 0, 1});
  CHECK_FALSE(parse_dns_query(pointer));
  std::string response = dns_query("a.b", 1);
  response[2] = char(0x81);
  CHECK_FALSE(parse_dns_query(response));
  CHECK_FALSE(parse_dns_query(dns_query("a.b", 1).substr(0, 16)));
  CHECK(dns_type_name(99) == "TYPE99");
  std::string refusal = dns_refusal(dns_query("a.b", 1, 0xbeef), *parse_dns_query(dns_query("a.b", 1, 0xbeef)));
  CHECK(refusal == u16(0xbeef) + u16(0x8105) + u16(1) + u16(0) + u16(0) + u16(0) + dns_query("a.b", 1).substr(12));
}

TEST_CASE("tripwire answers: a SYN gets a reset that verifies, from the address tried") {
  for (auto [src, dst] : {std::pair{"192.0.0.8", "10.77.3.2"}, std::pair{"fd61:7362:7877::1", "2001:db8::5"}}) {
    Answer a = answer_packet(packet(src, dst, 6, tcp(40000, 443, 777, 0, 0x02), 16));
    CHECK(a.attempt.kind == AttemptKind::tcp);
    CHECK(a.attempt.port == 443);
    Packet r = parse_packet(a.reply);
    CHECK((r.source.text() == dst && r.destination.text() == src));
    CHECK((r.source_port == 443 && r.destination_port == 40000 && r.tcp_flags == 0x14 && r.ack == 778 && r.seq == 0));
    CHECK(checksum_ok(a.reply));
  }
  CHECK(describe(answer_packet(packet("fd61:7362:7877::1", "2001:db8::5", 6, tcp(1, 22, 0, 0, 0x02))).attempt) ==
        "tcp connect to [2001:db8::5]:22");
  // a segment with ACK gets <SEQ=its ACK><RST>, and counts as no attempt; a reset gets nothing
  Answer ack = answer_packet(packet("192.0.0.8", "10.0.0.1", 6, tcp(1, 2, 5, 99, 0x10)));
  CHECK((ack.attempt.kind == AttemptKind::none && parse_packet(ack.reply).seq == 99 && parse_packet(ack.reply).tcp_flags == 0x04));
  Answer rst = answer_packet(packet("192.0.0.8", "10.0.0.1", 6, tcp(1, 2, 5, 99, 0x04)));
  CHECK((rst.attempt.kind == AttemptKind::none && rst.reply.empty()));
}

TEST_CASE("tripwire answers: DNS is refused in DNS, other UDP and pings get ICMP errors, kernel chatter nothing") {
  Answer d = answer_packet(packet("192.0.0.8", "10.255.255.53", 17, udp(5353, 53, dns_query("evil.example", 1)), 6));
  CHECK((d.attempt.kind == AttemptKind::dns && d.attempt.dns_name == "evil.example" && d.attempt.dns_type == "A"));
  Packet r = parse_packet(d.reply);
  CHECK((r.protocol == 17 && r.source_port == 53 && r.destination_port == 5353 && checksum_ok(d.reply)));
  CHECK(d.reply.substr(r.payload_offset, 4) == u16(0x1234) + u16(0x8105));
  CHECK(describe(d.attempt) == "dns query for evil.example (A)");

  std::string probe = packet("192.0.0.8", "10.77.3.2", 17, udp(40000, 9999, "hello"), 6);
  Answer u = answer_packet(probe);
  CHECK(describe(u.attempt) == "udp to 10.77.3.2:9999");
  Packet icmp = parse_packet(u.reply);
  CHECK((icmp.protocol == 1 && icmp.icmp_type == 3 && icmp.icmp_code == 3 && checksum_ok(u.reply)));
  CHECK(u.reply.substr(28) == probe);  // the whole offending packet quoted
  CHECK(u.reply.substr(12, 4) == raw(ip("10.77.3.2")));

  Answer u6 = answer_packet(packet("fd61:7362:7877::1", "2001:db8::5", 17, udp(1, 9, "x"), 6));
  Packet icmp6 = parse_packet(u6.reply);
  CHECK((icmp6.protocol == 58 && icmp6.icmp_type == 1 && icmp6.icmp_code == 4 && checksum_ok(u6.reply)));

  Answer ping = answer_packet(packet("192.0.0.8", "10.77.3.2", 1, bytes({8, 0, 0, 0, 0, 1, 0, 1}) + "payload", 2));
  CHECK(describe(ping.attempt) == "icmp echo to 10.77.3.2");
  CHECK((parse_packet(ping.reply).icmp_type == 3 && parse_packet(ping.reply).icmp_code == 13 && checksum_ok(ping.reply)));
  Answer ping6 = answer_packet(packet("fd61:7362:7877::1", "2001:db8::5", 58, bytes({128, 0, 0, 0, 0, 1, 0, 1}), 2));
  CHECK((ping6.attempt.kind == AttemptKind::icmp && parse_packet(ping6.reply).icmp_type == 1 && parse_packet(ping6.reply).icmp_code == 1));

  for (std::string chatter : {packet("192.0.0.8", "10.255.255.53", 1, bytes({3, 3, 0, 0, 0, 0, 0, 0}), 2),  // port unreachable for a late answer
                              packet("fe80::1", "ff02::2", 58, bytes({133, 0, 0, 0, 0, 0, 0, 0}), 2),    // router solicitation
                              packet("fe80::1", "ff02::16", 58, bytes({143, 0, 0, 0, 0, 0, 0, 0}), 2)}) { // listener report
    Answer a = answer_packet(chatter);
    CHECK((a.attempt.kind == AttemptKind::none && a.reply.empty()));
  }
  Answer mdns = answer_packet(packet("192.0.0.8", "224.0.0.251", 17, udp(5353, 5353, "q"), 6));
  CHECK((mdns.attempt.kind == AttemptKind::udp && mdns.reply.empty()));  // recorded, no ICMP error to multicast
  Answer sctp = answer_packet(packet("192.0.0.8", "10.0.0.1", 132, "xxxxxxxxxxxx"));
  CHECK((describe(sctp.attempt) == "ip/132 to 10.0.0.1" && parse_packet(sctp.reply).icmp_code == 13));
}

TEST_CASE("tripwire record: counts with the time of the first, one line per kind, bounded under a flood") {
  TripwireTally t;
  Attempt syn = answer_packet(packet("192.0.0.8", "10.77.3.2", 6, tcp(1, 80, 0, 0, 0x02))).attempt;
  CHECK(t.attempt(syn, 1000));
  CHECK_FALSE(t.attempt(syn, 2000));
  Attempt other = syn;
  other.port = 81;
  CHECK_FALSE(t.attempt(other, 3000));  // another tcp attempt: same kind, no second line
  Attempt q = answer_packet(packet("192.0.0.8", "10.0.0.53", 17, udp(9, 53, dns_query("x.test", 1)))).attempt;
  CHECK(t.attempt(q, 4000));
  CHECK(t.canary(".ssh/id_rsa", 5000));
  CHECK_FALSE(t.canary(".ssh/", 6000));
  nlohmann::json j = t.json(true, true);
  CHECK(j["network"] == nlohmann::json::parse(R"([{"protocol":"tcp","destination":"10.77.3.2","port":80,"count":2,"first_unix_ms":1000},
      {"protocol":"tcp","destination":"10.77.3.2","port":81,"count":1,"first_unix_ms":3000}])"));
  CHECK(j["dns"] == nlohmann::json::parse(R"([{"name":"x.test","count":1,"first_unix_ms":4000}])"));
  CHECK(j["canaries"] == nlohmann::json::parse(R"([{"path":".ssh/","count":1,"first_unix_ms":6000},{"path":".ssh/id_rsa","count":1,"first_unix_ms":5000}])"));
  CHECK(j["first"] == "tcp connect to 10.77.3.2:80");
  CHECK(describe_canary(".ssh/") == "canary ~/.ssh/ listed");
  CHECK(TripwireTally().json(false, false) ==
        nlohmann::json::parse(R"({"network":null,"dns":null,"canaries":null,"first":null})"));

  TripwireTally flood;
  for (int i = 0; i < 100000; ++i) {
    other.port = i % 65536;
    flood.attempt(other, i);
  }
  nlohmann::json f = flood.json(true, false);
  REQUIRE(f["network"].size() == TripwireTally::kMaxEntries + 1);
  std::int64_t sum = 0;
  for (const auto& e : f["network"]) sum += e["count"].get<std::int64_t>();
  CHECK(sum == 100000);
  CHECK(f["network"][0]["protocol"] == "(other)");
  CHECK(f["network"][0]["first_unix_ms"] == 256);  // the first attempt past the bound
}

TEST_CASE("tripwire decoys: the built-in list, paths, collisions, listed directories, contents") {
  for (const auto& path : default_canaries()) CHECK(canary_path_problem(path) == "");
  CHECK(canary_path_problem("../x") == "has an empty, '.' or '..' part");
  CHECK(canary_path_problem("/etc/shadow") == "must be a file under HOME (no leading or trailing '/')");
  CHECK(canary_path_problem("a b") == "may hold only letters, digits, '.', '_', '-' and '/'");
  CHECK(canary_path_problem("a/b/c/d/e/f/g/h/i") == "has more than 8 parts");

  LaunchPlan plan = plan_with("");
  const TripwirePlan& t = plan.tripwire;
  CHECK((t.mode == TripwireMode::record && t.network && t.canaries == default_canaries()));
  CHECK(t.listed_dirs == std::vector<std::string>{".ssh", ".aws", ".config/gh", ".docker", ".kube", ".config/gcloud"});
  CHECK(t.ping_group_range == "1000 1000");
  CHECK(t.env == std::vector<std::pair<std::string, std::string>>{{"NPM_CONFIG_USERCONFIG", "/sandbox/home/.config/npm/npmrc"}});
  CHECK(t.source == "seat.toml");

  LaunchPlan joined = plan_with("", "slirp4netns");
  CHECK((!joined.tripwire.network && joined.tripwire.ping_group_range.empty() && joined.tripwire.canaries.size() == 10));
  LaunchPlan off = plan_with("tripwire = \"off\"\n");
  CHECK((!off.tripwire.armed() && off.tripwire.env.empty()));
  LaunchPlan few = plan_with("tripwire = \"kill\"\ntripwire_canaries = [\"~/.netrc\", \".secrets/a\"]\n");
  CHECK((few.tripwire.mode == TripwireMode::kill && few.tripwire.canaries == std::vector<std::string>{".netrc", ".secrets/a"}));
  CHECK((few.tripwire.listed_dirs == std::vector<std::string>{".secrets"} && few.tripwire.env.empty()));
  CHECK(plan_with("tripwire_canaries = []\n").tripwire.canaries.empty());

  LaunchPlan stateful = plan;
  stateful.state.paths = {".aws"};
  CHECK(error_of([&] { plan_tripwire(TripwireSeat{}, stateful, "seat.toml"); }, ErrorKind::config) ==
        "seat.toml: tripwire_canaries: '.aws/credentials' would sit on the state path '.aws'; leave it out of the list");
  LaunchPlan cred = plan;
  cred.credentials.push_back({"codex", "/h/auth.json", "/sandbox/home/.npmrc", {}});
  CHECK(error_of([&] { plan_tripwire(TripwireSeat{}, cred, "seat.toml"); }, ErrorKind::config) ==
        "seat.toml: tripwire_canaries: '.npmrc' would sit on the codex credential copy; leave it out of the list");

  std::string key = canary_content(".ssh/id_ed25519", "mark-1");
  CHECK(key.rfind("-----BEGIN OPENSSH PRIVATE KEY-----\n", 0) == 0);
  CHECK(key == canary_content(".ssh/id_ed25519", "mark-1"));
  CHECK(key != canary_content(".ssh/id_ed25519", "mark-2"));
  CHECK(std::regex_search(canary_content(".aws/credentials", "m"), std::regex("aws_access_key_id = AKIA[A-Z2-7]{16}\n")));
  CHECK(std::regex_match(canary_content(".npmrc", "m"), std::regex("//registry.npmjs.org/:_authToken=npm_[A-Za-z0-9]{36}\n")));
  CHECK(nlohmann::json::parse(canary_content(".docker/config.json", "m"))["auths"].size() == 1);
  CHECK(nlohmann::json::parse(canary_content(".config/gcloud/application_default_credentials.json", "m"))["type"] == "authorized_user");
}

TEST_CASE("tripwire seat keys: mode and decoy list, errors with file:line") {
  CHECK(seat_from("").tripwire == TripwireSeat{});
  CHECK(error_of([] { seat_from("tripwire = \"loud\"\n"); }, ErrorKind::config) ==
        "seat.toml:1: tripwire must be \"record\", \"kill\" or \"off\"");
  CHECK(error_of([] { seat_from("\ntripwire_canaries = [\"../x\"]\n"); }, ErrorKind::config) ==
        "seat.toml:2: tripwire_canaries: '../x' has an empty, '.' or '..' part");
  CHECK(error_of([] { seat_from("tripwire_canaries = [\".a\", \"~/.a\"]\n"); }, ErrorKind::config) ==
        "seat.toml:1: tripwire_canaries: '.a' is listed twice");
  CHECK(error_of([] { seat_from("tripwire = true\n"); }, ErrorKind::config).find("tripwire") != std::string::npos);
}

TEST_CASE("the tripwire's device fails closed with the tripwire kind naming the step") {
  CHECK(error_of([] { open_tripwire_device(999999999); }, ErrorKind::tripwire) ==
        "tripwire: cannot open /proc/999999999/ns/net: No such file or directory");
  CHECK(exit_code_of(ErrorKind::tripwire) == 225);
}
