// The rules that split a call by its arguments (issue 34's second pass): the native ABI only,
// AF_INET/AF_INET6 by type and protocol, socketpair AF_UNIX only, MSG_OOB. Each call is checked
// against the rendered rules as the filter would: exactly one rule matches (libseccomp silently
// drops a conditional refusal that overlaps an allow), and it allows or refuses as the table says.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <netinet/in.h>
#include <sys/socket.h>

#include "seccomp/profile.h"
#include "seccomp/table.h"

using namespace asbx;
using nlohmann::json;

namespace {

json rendered() {
  std::ifstream in(std::string(ASBX_SOURCE_DIR) + "/tests/unit/fixtures/seccomp/podman-4.3.1-default.json");
  return render_seccomp_profile(json::parse(std::string(std::istreambuf_iterator<char>(in), {})));
}

bool holds(const json& cmp, const std::vector<std::uint64_t>& args) {
  std::uint64_t a = args.at(cmp["index"].get<std::size_t>()), v = cmp["value"], v2 = cmp["valueTwo"];
  std::string op = cmp["op"];
  if (op == "SCMP_CMP_EQ") return a == v;
  if (op == "SCMP_CMP_NE") return a != v;
  if (op == "SCMP_CMP_GE") return a >= v;
  if (op == "SCMP_CMP_GT") return a > v;
  if (op == "SCMP_CMP_LT") return a < v;
  if (op == "SCMP_CMP_LE") return a <= v;
  if (op == "SCMP_CMP_MASKED_EQ") return (a & v) == v2;
  FAIL("unknown op " << op);
  return false;
}

// The one entry of `profile` that decides `call(args)`; "" when none does (the default action).
std::string decide(const json& profile, const std::string& call, const std::vector<std::uint64_t>& args) {
  std::vector<json> hits;
  for (const auto& e : profile["syscalls"]) {
    bool named = false;
    for (const auto& n : e.value("names", json::array())) named = named || n == call;
    if (!named) continue;
    bool all = true;
    for (const auto& c : e.value("args", json::array())) all = all && holds(c, args);
    if (all) hits.push_back(e);
  }
  INFO(call << " " << json(args).dump());
  REQUIRE(hits.size() <= 1);
  if (hits.empty()) return "";
  if (hits[0]["action"] == "SCMP_ACT_ALLOW") return "allow";
  return "errno " + std::to_string(hits[0]["errnoRet"].get<int>());
}

bool inet_allowed(std::uint64_t family, std::uint64_t type, std::uint64_t protocol) {
  for (const auto& p : inet_protocols_allowed())
    for (std::uint64_t allowed : p.protocols)
      if (std::uint64_t(p.family) == family && std::uint64_t(p.type) == (type & 0xf) && protocol == allowed)
        return true;
  return false;
}

}  // namespace

TEST_CASE("seccomp: no sub-architecture: an i386 or x32 call gets the bad-architecture action") {
  json out = rendered();
  REQUIRE(out.contains("archMap"));
  for (const auto& a : out["archMap"]) CHECK(a["subArchitectures"].empty());
  CHECK(!out.contains("architectures"));
}

TEST_CASE("seccomp: AF_INET/AF_INET6 by type and protocol, every call decided by exactly one rule") {
  json out = rendered();
  const std::uint64_t flags[] = {0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_NONBLOCK | SOCK_CLOEXEC, std::uint64_t(1) << 32};
  const std::uint64_t protocols[] = {0, 1, 2, 5, 6, 7, 16, 17, 18, 33, 58, 63, 64, 132, 136, 255, 256, 262,
                                     0x100000000, 0x100000006, ~std::uint64_t(0)};
  for (std::uint64_t family : {AF_INET, AF_INET6})
    for (std::uint64_t type = 0; type < 16; ++type)
      for (std::uint64_t f : flags)
        for (std::uint64_t protocol : protocols) {
          std::string got = decide(out, "socket", {family, type | f, protocol});
          INFO(family << " " << (type | f) << " " << protocol);
          bool known_type = type == SOCK_STREAM || type == SOCK_DGRAM;
          CHECK(got == (inet_allowed(family, type, protocol) ? "allow"
                        : known_type                          ? "errno " + std::to_string(EPROTONOSUPPORT)
                                                              : "errno " + std::to_string(ESOCKTNOSUPPORT)));
        }
  // What real work opens stays open; what the holes used is refused.
  CHECK(decide(out, "socket", {AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP}) == "allow");
  CHECK(decide(out, "socket", {AF_INET, SOCK_DGRAM, IPPROTO_ICMP}) == "allow");  // the tripwire's ping
  CHECK(decide(out, "socket", {AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6}) == "allow");
  CHECK(decide(out, "socket", {AF_INET, SOCK_STREAM, 262}) == "errno 93");  // IPPROTO_MPTCP
  CHECK(decide(out, "socket", {AF_INET, SOCK_PACKET, 0x300}) == "errno 94");
  CHECK(decide(out, "socket", {AF_UNIX, SOCK_STREAM, 0}) == "allow");
  CHECK(decide(out, "socket", {AF_NETLINK, SOCK_RAW, 0}) == "allow");
  CHECK(decide(out, "socket", {AF_PACKET, SOCK_RAW, 0}) == "errno 97");
}

TEST_CASE("seccomp: MPTCP and the other protocols are refused unrecorded; other types are recorded") {
  for (const auto& row : seccomp_table()) {
    if (row.match == SeccompMatch::inet_protocol) CHECK(!row.recorded);
    if (row.match == SeccompMatch::inet_type || row.match == SeccompMatch::socketpair_family ||
        row.match == SeccompMatch::msg_oob)
      CHECK(row.recorded);
  }
}

TEST_CASE("seccomp: socketpair AF_UNIX only; MSG_OOB refused on every send/recv call") {
  json out = rendered();
  CHECK(decide(out, "socketpair", {AF_UNIX, SOCK_STREAM, 0, 0}) == "allow");
  for (std::uint64_t family : {std::uint64_t(AF_NETLINK), std::uint64_t(30), std::uint64_t(0x100000001)})
    CHECK(decide(out, "socketpair", {family, SOCK_DGRAM, 0, 0}) == "errno 97");
  for (const char* call : {"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg"}) {
    int i = msg_flags_index(call);
    for (std::uint64_t flags : {std::uint64_t(0), std::uint64_t(MSG_DONTWAIT | MSG_NOSIGNAL), std::uint64_t(1) << 32,
                                std::uint64_t(MSG_OOB), std::uint64_t(MSG_OOB | MSG_DONTWAIT), ~std::uint64_t(0)}) {
      std::vector<std::uint64_t> args(6, 0);
      args[i] = flags;
      CHECK(decide(out, call, args) == ((flags & MSG_OOB) ? "errno 95" : "allow"));
    }
  }
}

TEST_CASE("seccomp: modify_ldt and memfd_secret answer ENOSYS, pidfd_getfd EPERM") {
  json out = rendered();
  CHECK(decide(out, "modify_ldt", {1, 0, 16}) == "errno 38");
  CHECK(decide(out, "memfd_secret", {0}) == "errno 38");
  CHECK(decide(out, "pidfd_getfd", {3, 0, 0}) == "errno 1");
}

TEST_CASE("seccomp: blocks_outside covers exactly the values not allowed, below the limit") {
  using V = std::vector<std::uint64_t>;
  for (const V& allowed : {V{0, 6}, V{0, 17, 1}, V{0, 17, 58}, V{}, V{63}}) {
    auto blocks = blocks_outside(allowed, 64);
    for (std::uint64_t v = 0; v < 80; ++v) {
      int hits = 0;
      for (const auto& b : blocks) hits += (v & b.mask) == b.value;
      bool out = v < 64 && std::find(allowed.begin(), allowed.end(), v) == allowed.end();
      CHECK(hits == (out ? 1 : 0));
    }
  }
  CHECK(blocks_outside({0, 6}, 64).size() == 7);  // 1, 2-3, 4-5, 7, 8-15, 16-31, 32-63
}

TEST_CASE("seccomp: setsockopt TCP_ULP and UDP_ENCAP refused, every other int option allowed, by exactly one rule") {
  json out = rendered();
  const std::uint64_t levels[] = {0, 1, 5, 6, 7, 16, 17, 18, 41, 58, 255, 270, 0x7fffffff, 0x80000000, 0xffffffff};
  const std::uint64_t names[] = {0, 1, 2, 30, 31, 32, 99, 100, 101, 0x12345678, 0xffffffff};
  for (std::uint64_t level : levels)
    for (std::uint64_t name : names) {
      bool refused = (level == 6 && name == 31) || (level == 17 && name == 100);
      CHECK(decide(out, "setsockopt", {3, level, name, 0, 4}) == (refused ? "errno 92" : "allow"));
    }
  // A value the kernel would truncate to a refused one matches no allow: the default action.
  CHECK(decide(out, "setsockopt", {3, 0x100000006, 31, 0, 4}) == "");
  CHECK(decide(out, "setsockopt", {3, 6, 0x10000001f, 0, 4}) == "");
  CHECK(decide(out, "setsockopt", {3, ~std::uint64_t(0), 1, 0, 4}) == "");
  CHECK(out["defaultAction"] == "SCMP_ACT_ERRNO");
}

TEST_CASE("seccomp: a gVisor session's profile keeps setsockopt as the default has it (runsc refuses the rules)") {
  std::ifstream in(std::string(ASBX_SOURCE_DIR) + "/tests/unit/fixtures/seccomp/podman-4.3.1-default.json");
  json gvisor = render_seccomp_profile(json::parse(std::string(std::istreambuf_iterator<char>(in), {})), "gvisor");
  CHECK(decide(gvisor, "setsockopt", {3, 6, 31, 0, 4}) == "allow");
  CHECK(decide(gvisor, "socket", {AF_INET, SOCK_STREAM, 0}) == "allow");  // the family and type rules stay
  CHECK(decide(gvisor, "socket", {AF_INET, SOCK_RAW, 0}) == "errno 94");
  CHECK(decide(gvisor, "socket", {AF_ALG, SOCK_SEQPACKET, 0}) == "errno 97");
  // The protocol rule does not (the sentry makes TCP and UDP sockets only, and its refusal lines
  // name no protocol): MPTCP is the sentry's to refuse, never a recorded refusal.
  CHECK(decide(gvisor, "socket", {AF_INET, SOCK_STREAM, 262}) == "allow");
  CHECK(decide(gvisor, "socket", {AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMPV6}) == "allow");
}
