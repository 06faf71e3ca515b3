// The egress wall's pure parts: the policy (flags, seat cap, runtime rows), the request-head
// parser, the ClientHello name, the decisions, the record, and the plan it makes.
#include <doctest/doctest.h>

#include "plan/config.h"
#include "plan/build_plan.h"
#include "base/address.h"
#include "egress/decision.h"
#include "launcher/wall/door.h"
#include "egress/http_forward.h"
#include "egress/http_head.h"
#include "egress/policy.h"
#include "egress/sni.h"
#include "egress/tally.h"
#include "base/error.h"
#include "base/request.h"
#include "launcher/podman/spec.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;
using nlohmann::json;

namespace {

SeatConfig seat_from(const std::string& text) { return parse_seat_config(text, "seat.toml", root_user()); }

EgressPlan plan_of(std::vector<std::string> asked, const std::string& seat_text = "") {
  return plan_egress(asked, {}, "", seat_from(seat_text).egress, "seat.toml");
}

Destination dest(const std::string& raw) { return destination_of(parse_request_head(raw)); }

// A minimal TLS 1.2 ClientHello with an optional server_name.
std::string client_hello(const std::string& name) {
  std::string ext;
  if (!name.empty()) {
    std::string entry = std::string("\x00", 1) + char(name.size() >> 8) + char(name.size() & 0xff) + name;
    std::string list = std::string(1, char(entry.size() >> 8)) + char(entry.size() & 0xff) + entry;
    ext = std::string("\x00\x00", 2) + char(list.size() >> 8) + char(list.size() & 0xff) + list;
  }
  std::string body = std::string("\x03\x03", 2) + std::string(32, 'r') + std::string("\x00", 1) +
                     std::string("\x00\x02\x13\x01", 4) + std::string("\x01\x00", 2) +
                     char(ext.size() >> 8) + char(ext.size() & 0xff) + ext;
  std::string hs = std::string("\x01\x00", 2) + char(body.size() >> 8) + char(body.size() & 0xff) + body;
  return std::string("\x16\x03\x01", 3) + char(hs.size() >> 8) + char(hs.size() & 0xff) + hs;
}

}  // namespace

TEST_CASE("egress rules: names, wildcards, ports, http://; addresses and junk refused") {
  CHECK(parse_egress_rule("API.OpenAI.com", "--egress", false).text() == "api.openai.com:443");
  CHECK(parse_egress_rule("api.mock.test:8080", "--egress", false).text() == "api.mock.test:8080");
  CHECK(parse_egress_rule("http://api.mock.test", "--egress", false).text() == "http://api.mock.test:80");
  CHECK(parse_egress_rule("*.anthropic.com", "--egress", false).host == "*.anthropic.com");
  CHECK(error_of([] { parse_egress_rule("10.0.0.1", "--egress", false); }, ErrorKind::usage) ==
        "--egress: '10.0.0.1' is an IP address: egress names hosts, never addresses");
  CHECK(error_of([] { parse_egress_rule("[::1]:443", "--egress", false); }, ErrorKind::usage) ==
        "--egress: '[::1]:443' is an IP address: egress names hosts, never addresses");
  CHECK(error_of([] { parse_egress_rule("a.com:0", "--egress", false); }, ErrorKind::usage) ==
        "--egress: 'a.com:0' has no port between 1 and 65535 after ':'");
  CHECK(error_of([] { parse_egress_rule("https://a.com", "--egress", false); }, ErrorKind::usage) ==
        "--egress: 'https://a.com' is not HOST[:PORT]: the only scheme is http:// (TLS needs none)");
  for (const char* junk : {"*.com", "*", "a..b", "a b", "", "a/b", "*.*.x"})
    CHECK(error_of([&] { parse_egress_rule(junk, "--egress", false); }, ErrorKind::usage).find("is not a host name") !=
          std::string::npos);
  CHECK(error_of([] { parse_egress_rule("\x01", "x", true); }, ErrorKind::config) ==
        "x: the value is not a host name or *.domain (letters, digits, '-', '.'; a wildcard needs a dotted domain)");
}

TEST_CASE("egress rules match exact names and strict subdomains on their own port and scheme") {
  EgressRule wild = parse_egress_rule("*.anthropic.com", "x", false);
  CHECK(wild.matches("api.anthropic.com", 443, false));
  CHECK(wild.matches("a.b.anthropic.com", 443, false));
  CHECK_FALSE(wild.matches("anthropic.com", 443, false));
  CHECK_FALSE(wild.matches("evilanthropic.com", 443, false));
  CHECK_FALSE(wild.matches("api.anthropic.com", 80, false));
  CHECK_FALSE(wild.matches("api.anthropic.com", 443, true));
  EgressRule exact = parse_egress_rule("api.openai.com", "x", false);
  CHECK(exact.matches("api.openai.com", 443, false));
  CHECK_FALSE(exact.matches("x.api.openai.com", 443, false));
}

TEST_CASE("the seat's allow caps what callers may ask for") {
  const std::string seat = "[egress]\nallow = [\"api.openai.com\", \"*.anthropic.com\"]\n";
  CHECK(plan_of({"api.openai.com", "api.anthropic.com", "*.x.anthropic.com"}, seat).rules.size() == 3);
  CHECK(error_of([&] { plan_of({"evil.example"}, seat); }, ErrorKind::usage) ==
        "--egress: 'evil.example:443' is beyond this seat's [egress] allow (seat.toml: api.openai.com:443, "
        "*.anthropic.com:443)");
  CHECK(error_of([&] { plan_of({"*.openai.com"}, seat); }, ErrorKind::usage).find("beyond this seat") != std::string::npos);
  CHECK(error_of([&] { plan_of({"api.openai.com:8443"}, seat); }, ErrorKind::usage).find("beyond") != std::string::npos);
  CHECK(error_of([&] { plan_of({"anything.example"}, "[egress]\nallow = []\n"); }, ErrorKind::usage) ==
        "--egress: 'anything.example:443' is beyond this seat's [egress] allow (seat.toml: nothing)");
  CHECK(plan_of({"anything.example"}).rules.size() == 1);  // no allow: any public name
  CHECK_FALSE(plan_of({}).enabled);
}

TEST_CASE("--egress default is the runtime row's endpoints") {
  EgressPlan p = plan_egress({"default", "api.openai.com"}, {"api.openai.com", "chatgpt.com"}, "codex", {}, "s");
  REQUIRE(p.rules.size() == 2);
  CHECK(p.rules[1].host == "chatgpt.com");
  CHECK(error_of([] { plan_egress({"default"}, {}, "", {}, "s"); }, ErrorKind::usage) ==
        "--egress default: needs --runtime NAME (the row's endpoints)");
  CHECK(error_of([] { plan_egress({"default"}, {}, "cursor-agent", {}, "s"); }, ErrorKind::usage) ==
        "--egress default: runtime 'cursor-agent' names no egress endpoints");
}

TEST_CASE("the seat's [egress] table: errors name file:line") {
  SeatConfig s = seat_from("[egress]\nhosts = { \"API.mock.test\" = \"10.1.2.3\" }\nprivate_ok = [\"10.1.2.0/24\"]\n");
  CHECK(s.egress.hosts.at("api.mock.test") == "10.1.2.3");
  CHECK(s.egress.private_ok.at(0).text() == "10.1.2.0/24");
  CHECK_FALSE(s.egress.allow.has_value());
  CHECK(error_of([] { seat_from("[egress]\nprivate_ok = [\"10.1.2.3/24\"]\n"); }, ErrorKind::config) ==
        "seat.toml:2: private_ok: '10.1.2.3/24' is not ADDRESS/PREFIX");
  CHECK(error_of([] { seat_from("[egress]\nhosts = { \"a.test\" = \"a.b\" }\n"); }, ErrorKind::config) ==
        "seat.toml:2: hosts: 'a.test' must be a host name mapped to an IP address literal");
  CHECK(error_of([] { seat_from("[egress]\nallow = [\"1.2.3.4\"]\n"); }, ErrorKind::config) ==
        "seat.toml:2: allow: '1.2.3.4' is an IP address: egress names hosts, never addresses");
  CHECK(error_of([] { seat_from("[egress]\nport = 1\n"); }, ErrorKind::config).rfind("seat.toml:2", 0) == 0);
}

TEST_CASE("addresses: non-public ranges and CIDRs") {
  auto range = [](const char* a) { return non_public_range(*parse_ip(a)); };
  CHECK(range("127.0.0.1") == "loopback");
  CHECK(range("10.9.8.7") == "private");
  CHECK(range("172.31.0.1") == "private");
  CHECK(range("192.168.1.1") == "private");
  CHECK(range("169.254.169.254") == "link-local");
  CHECK(range("0.0.0.0") == "unspecified");
  CHECK(range("::1") == "loopback");
  CHECK(range("fe80::1") == "link-local");
  CHECK(range("fd00::1") == "private");
  CHECK(range("::ffff:127.0.0.1") == "loopback");
  CHECK(range("1.1.1.1") == "");
  CHECK(range("2606:4700::1111") == "");
  CHECK(parse_cidr("10.0.0.0/8")->contains(*parse_ip("10.200.0.1")));
  CHECK_FALSE(parse_cidr("10.0.0.0/8")->contains(*parse_ip("11.0.0.1")));
  CHECK(parse_cidr("127.0.0.1")->prefix == 32);
  CHECK_FALSE(parse_cidr("10.0.0.0/33"));
  CHECK_FALSE(parse_cidr("nonsense/8"));
}

TEST_CASE("the request head: CONNECT and absolute-form, nothing else") {
  RequestHead h = parse_request_head("CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\nTLS");
  REQUIRE(h.status == RequestHead::Status::ok);
  CHECK(h.length == 65);
  CHECK(h.header("host") == "api.openai.com:443");
  Destination d = destination_of(h);
  CHECK((d.ok && d.host == "api.openai.com" && d.port == 443 && !d.plain_http));
  d = dest("POST http://API.mock.test:8080/v1/responses?x=1 HTTP/1.1\r\nHost: api.mock.test:8080\r\n\r\n");
  CHECK((d.ok && d.host == "api.mock.test" && d.port == 8080 && d.plain_http && d.path == "/v1/responses?x=1"));
  CHECK(dest("GET http://a.test HTTP/1.0\r\n\r\n").path == "/");
  CHECK(dest("CONNECT [::1]:443 HTTP/1.1\r\n\r\n").host == "[::1]");
  CHECK(parse_request_head("CONNECT a:1 HTTP/1.1\r\nHost: a").status == RequestHead::Status::incomplete);
  CHECK(parse_request_head("GET / HTTP/1.1\n\n").status == RequestHead::Status::bad);  // bare LF (RFC 9112 §2.2)
  CHECK(dest("GET / HTTP/1.1\r\n\r\n").why == "a proxy request needs an http:// URI or CONNECT");
  CHECK(dest("GET https://a.test/ HTTP/1.1\r\n\r\n").why == "https:// goes through CONNECT");
  for (const char* bad : {"CONNECT a.test HTTP/1.1\r\n\r\n", "CONNECT a.test:0 HTTP/1.1\r\n\r\n",
                          "CONNECT user@a.test:443 HTTP/1.1\r\n\r\n", "CONNECT a.test: HTTP/1.1\r\n\r\n"})
    CHECK_FALSE(dest(bad).ok);
  for (const char* bad : {"CONNECT  a:1 HTTP/1.1\r\n\r\n", "CONNECT a:1 HTTP/2\r\n\r\n", "CONNECT a:1 HTTP/1.1\r\n x\r\n\r\n",
                          "CONNECT a:1 HTTP/1.1\r\nno colon\r\n\r\n", "C\x01 a:1 HTTP/1.1\r\n\r\n"})
    CHECK(parse_request_head(bad).status == RequestHead::Status::bad);
  CHECK(parse_request_head(std::string(kMaxRequestHead, 'A')).why == "request head longer than 16 KiB");
}

TEST_CASE("a forwarded head is origin-form, without hop-by-hop fields, one request per connection") {
  RequestHead h = parse_request_head("POST http://a.test:8080/v1/x HTTP/1.1\r\nHost: a.test:8080\r\nProxy-Connection: "
                                     "keep-alive\r\nConnection: keep-alive\r\nProxy-Authorization: x\r\nContent-Length: "
                                     "2\r\n\r\n");
  CHECK(plan_forward(h, destination_of(h)).head ==
        "POST /v1/x HTTP/1.1\r\nhost: a.test:8080\r\ncontent-length: 2\r\nconnection: close\r\n\r\n");
}

TEST_CASE("the ClientHello's server name") {
  std::string hello = client_hello("api.openai.com");
  SniResult r = client_hello_sni(hello);
  CHECK(r.status == SniResult::Status::ok);
  CHECK(r.name == "api.openai.com");
  CHECK(client_hello_sni(hello.substr(0, 20)).status == SniResult::Status::incomplete);
  CHECK(client_hello_sni(client_hello("")).status == SniResult::Status::no_sni);
  CHECK(client_hello_sni("GET / HTTP/1.1\r\n").status == SniResult::Status::not_tls);
  CHECK(client_hello_sni("").status == SniResult::Status::incomplete);
  // The same ClientHello split over two records.
  std::string hs = hello.substr(5);
  std::string two = std::string("\x16\x03\x01\x00\x0a", 5) + hs.substr(0, 10) + "\x16\x03\x01" +
                    char((hs.size() - 10) >> 8) + char((hs.size() - 10) & 0xff) + hs.substr(10);
  CHECK(client_hello_sni(two).name == "api.openai.com");
}

TEST_CASE("decisions: the list before DNS, no IP literals, private ranges only as excepted, SNI = host") {
  EgressPlan p = plan_of({"api.mock.test:8080", "http://api.mock.test:8080", "*.anthropic.com"},
                         "[egress]\nhosts = { \"api.mock.test\" = \"10.77.0.2\" }\nprivate_ok = [\"10.77.0.2/32\"]\n");
  auto name = [&](const std::string& raw) { return decide_name(p, dest(raw)).value_or("allowed"); };
  CHECK(name("CONNECT api.mock.test:8080 HTTP/1.1\r\n\r\n") == "allowed");
  CHECK(name("CONNECT API.MOCK.TEST.:8080 HTTP/1.1\r\n\r\n") == "allowed");
  CHECK(name("CONNECT api.anthropic.com:443 HTTP/1.1\r\n\r\n") == "allowed");
  CHECK(name("CONNECT api.mock.test:443 HTTP/1.1\r\n\r\n") == "not_allowed");
  CHECK(name("CONNECT evil.example:443 HTTP/1.1\r\n\r\n") == "not_allowed");
  CHECK(name("CONNECT 10.77.0.2:8080 HTTP/1.1\r\n\r\n") == "ip_literal");
  CHECK(name("CONNECT [::1]:8080 HTTP/1.1\r\n\r\n") == "ip_literal");
  CHECK(name("GET http://10.77.0.2:8080/ HTTP/1.1\r\n\r\n") == "ip_literal");
  CHECK(name("GET http://api.mock.test:8080/ HTTP/1.1\r\n\r\n") == "allowed");
  CHECK(name("GET / HTTP/1.1\r\n\r\n") == "bad_request");
  RequestHead h = parse_request_head("GET http://api.mock.test:8080/ HTTP/1.1\r\nHost: evil.example\r\n\r\n");
  CHECK(check_host_field(h, destination_of(h)) == std::optional<std::string>("host_mismatch"));
  h = parse_request_head("GET http://api.mock.test:8080/ HTTP/1.1\r\nHost: API.mock.test:8080\r\n\r\n");
  CHECK_FALSE(check_host_field(h, destination_of(h)));
  CHECK(static_address(p, "API.mock.test")->text() == "10.77.0.2");
  CHECK_FALSE(static_address(p, "other.test"));
  CHECK_FALSE(check_addresses(p, {*parse_ip("10.77.0.2"), *parse_ip("1.1.1.1")}));
  CHECK(check_addresses(p, {*parse_ip("1.1.1.1"), *parse_ip("127.0.0.1")}) == std::optional<std::string>("private_address"));
  CHECK(check_addresses(p, {*parse_ip("169.254.169.254")}) == std::optional<std::string>("private_address"));
  CHECK(check_addresses(p, {}) == std::optional<std::string>("unresolved"));
  CHECK_FALSE(check_sni("api.mock.test", "API.Mock.Test."));
  CHECK(check_sni("api.mock.test", "evil.example") == std::optional<std::string>("sni_mismatch"));
}

TEST_CASE("the record: bytes and connections per host, refusals per destination and reason") {
  EgressTally t;
  t.connection("api.mock.test", 8080);
  t.connection("api.mock.test", 8080);
  t.bytes("api.mock.test", 8080, 100, 2000);
  t.refused("evil.example", 443, "not_allowed");
  t.refused("evil.example", 443, "not_allowed");
  t.refused("bad\x1b[31mhost", 443, "bad_request");
  CHECK(t.json() == json::parse(R"({"allowed":[{"host":"api.mock.test","port":8080,"bytes_out":100,"bytes_in":2000,
    "connections":2}],"refused":[{"host":"bad?[31mhost","port":443,"reason":"bad_request","count":1},
    {"host":"evil.example","port":443,"reason":"not_allowed","count":2}]})"));
  for (std::size_t i = 0; i < EgressTally::kMaxRefusedKinds + 10; ++i) t.refused("h" + std::to_string(i), 1, "not_allowed");
  CHECK(t.json()["refused"].size() == EgressTally::kMaxRefusedKinds + 1);
}

TEST_CASE("an egress plan: proxy variables in the env, the policy in the dry run, network none required") {
  Request r;
  r.id = "e1";
  r.argv = {"true"};
  r.egress = {"api.mock.test:8080"};
  SessionFacts f;
  f.environ = {{"HTTPS_PROXY", "http://host-proxy:1"}};
  LaunchPlan plan = build_plan(r, seat_from("socket = \"/s.sock\"\n"), root_user(), f);
  json body = create_body(plan);
  CHECK(body["httpproxy"] == false);
  CHECK(body["netns"] == json({{"nsmode", "none"}}));
  CHECK(body["env"]["HTTPS_PROXY"] == "http://127.0.0.1:3128");
  CHECK(body["env"]["http_proxy"] == "http://127.0.0.1:3128");
  CHECK(body["env"]["NO_PROXY"] == "localhost,127.0.0.1,::1");
  CHECK(body["env"]["NODE_USE_ENV_PROXY"] == "1");
  CHECK(plan_json(plan)["egress"] == json::parse(R"({"door":"127.0.0.1:3128","allow":["api.mock.test:8080"],"hosts":{},
    "private_ok":[],"idle_ms":300000,"total_ms":3600000,"max_connections":64,"inject":[]})"));
  r.egress.clear();
  plan = build_plan(r, seat_from("socket = \"/s.sock\"\n"), root_user(), f);
  CHECK(plan_json(plan)["egress"].is_null());
  CHECK_FALSE(create_body(plan)["env"].contains("HTTPS_PROXY"));
  r.egress = {"a.test"};
  r.network = "slirp4netns";
  CHECK(error_of([&] { build_plan(r, seat_from(""), root_user(), f); }, ErrorKind::usage) ==
        "--egress: needs network none (the wall is the container's own empty namespace); the session's network is "
        "'slirp4netns'");
}

TEST_CASE("the door fails closed with egress_unavailable naming the step") {
  CHECK(error_of([] { open_door(999999999, 3128); }, ErrorKind::egress_unavailable) ==
        "egress door: cannot open /proc/999999999/ns/net: No such file or directory");
  CHECK(exit_code_of(ErrorKind::egress_unavailable) == 224);
}
