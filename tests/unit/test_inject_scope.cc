// Inject mode's narrower authority (issue 33): the access token's placeholder only, once a request,
// GET/POST only, no hop-by-hop fields, no upgrade, no duplicated credential field; the scan's
// encodings of the real values (credtable/placeholder.h exposure_forms) and the output scan.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "credtable/placeholder.h"
#include "egress/inject.h"
#include "launcher/lifecycle/secret_scan.h"

using namespace asbx;

namespace {

const std::string kAccess = "sk-ant-oat01-PLACEHOLDERAAAA", kRefresh = "sk-ant-ort01-PLACEHOLDERBBBB";
const std::string kRealAccess = "sk-ant-oat01-REALACCESSAAAA", kRealRefresh = "sk-ant-ort01-REALREFRESHBBB";

void fill(SecretBook& book) {
  book.add(kAccess, kRealAccess, on_the_wire("claudeAiOauth.accessToken"));
  book.add(kRefresh, kRealRefresh, on_the_wire("claudeAiOauth.refreshToken"));
}

RequestHead head_of(const std::string& fields, const std::string& line = "GET /v1/models HTTP/1.1") {
  RequestHead h = parse_request_head(line + "\r\n" + fields + "\r\n");
  REQUIRE(h.status == RequestHead::Status::ok);
  return h;
}

}  // namespace

TEST_CASE("inject scope: only the access token and the API key go on the wire") {
  CHECK(on_the_wire("claudeAiOauth.accessToken"));
  CHECK(on_the_wire("tokens.access_token"));
  CHECK(on_the_wire("OPENAI_API_KEY"));
  CHECK_FALSE(on_the_wire("claudeAiOauth.refreshToken"));
  CHECK_FALSE(on_the_wire("tokens.refresh_token"));
  CHECK_FALSE(on_the_wire("tokens.id_token"));
}

TEST_CASE("inject scope: the refresh token's placeholder is never swapped (an echoing upstream sees a placeholder)") {
  SecretBook book;
  fill(book);
  CHECK(book.real_of(kAccess) == std::optional<std::string>(kRealAccess));
  CHECK_FALSE(book.real_of(kRefresh));
  HeadRewrite rw = rewrite_head(head_of("Authorization: Bearer " + kRefresh + "\r\n"), "api.anthropic.com", book);
  CHECK(rw.swapped == 0);
  CHECK(rw.elsewhere == 1);
  CHECK(rw.head.find(kRealRefresh) == std::string::npos);
  CHECK(rw.head.find("authorization: Bearer " + kRefresh) != std::string::npos);
  // the control: the access token's placeholder is swapped
  CHECK(rewrite_head(head_of("Authorization: Bearer " + kAccess + "\r\n"), "api.anthropic.com", book).swapped == 1);
  // both are still what the scans look for
  auto reals = book.real_values();
  CHECK(std::find(reals.begin(), reals.end(), kRealRefresh) != reals.end());
}

TEST_CASE("inject scope: a second credential field, an upgrade, a method the CLIs never use are refused") {
  auto refused = [](const RequestHead& h) { auto r = check_inject_head(h); return r ? std::string(r->reason) + " " + std::to_string(r->status) : ""; };
  CHECK(refused(head_of("Authorization: Bearer " + kAccess + "\r\n")) == "");
  CHECK(refused(head_of("Authorization: Bearer " + kAccess + "\r\nAuthorization: Bearer " + kAccess + "\r\n")) ==
        "credential_repeated 400");
  CHECK(refused(head_of("Authorization: Bearer " + kAccess + "\r\nx-api-key: " + kAccess + "\r\n")) == "credential_repeated 400");
  CHECK(refused(head_of("Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nConnection: Upgrade, HTTP2-Settings\r\n")) ==
        "upgrade_refused 426");
  CHECK(refused(head_of("Upgrade: websocket\r\n")) == "websocket_refused 426");
  CHECK(refused(head_of("", "TRACE /v1/models HTTP/1.1")) == "inject_method_refused 405");
  CHECK(refused(head_of("", "PROPFIND /v1/ HTTP/1.1")) == "inject_method_refused 405");
  CHECK(refused(head_of("", "POST /v1/messages HTTP/1.1")) == "");
}

TEST_CASE("inject scope: hop-by-hop fields never go up, and Connection cannot name a field away") {
  SecretBook book;
  fill(book);
  HeadRewrite rw = rewrite_head(head_of("Authorization: Bearer " + kAccess + "\r\nConnection: keep-alive, authorization\r\n"
                                        "Keep-Alive: timeout=5\r\nTE: trailers\r\nTrailer: x-a\r\nProxy-Connection: x\r\n"
                                        "Content-Type: application/json\r\n"),
                                "api.anthropic.com", book);
  CHECK(rw.head == "GET /v1/models HTTP/1.1\r\nhost: api.anthropic.com\r\nauthorization: Bearer " + kRealAccess +
                       "\r\ncontent-type: application/json\r\n\r\n");
}

TEST_CASE("inject scope: the rewriter refuses a TRACE before a byte goes up") {
  SecretBook book;
  fill(book);
  InjectHost api{"api.anthropic.com", "claude", false, {"/v1/"}, {}, "", ""};
  RequestRewriter rw(api, "api.anthropic.com", book);
  std::string up;
  std::size_t used = 0;
  CHECK(rw.feed("TRACE /v1/models HTTP/1.1\r\nAuthorization: Bearer " + kAccess + "\r\n\r\n", up, used) ==
        RequestRewriter::Status::refused);
  CHECK(rw.refusal_status() == 405);
  CHECK(up.empty());
}

TEST_CASE("exposure forms: the value, reversed, hex, base64 and base64url at every offset inside a longer text") {
  std::string real = "sk-ant-ort01-REALREFRESHBBB-0123456789";
  auto values = exposure_values({real});
  auto b64 = [](const std::string& s) {  // standard base64 with padding, as base64(1) writes it
    std::string u = base64url_encode(s);
    for (char& c : u) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (u.size() % 4) u += '=';
    return u;
  };
  for (const std::string& before : {"", "x", "xy", "{\"refresh\":\""}) {
    CAPTURE(before);
    CHECK(holds_any("junk " + b64(before + real + "\"}") + " junk", values));
    CHECK(holds_any(base64url_encode(before + real + "!"), values));
  }
  std::string hex;
  for (unsigned char c : real) hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15];
  CHECK(holds_any("=" + hex + "=", values));
  CHECK(holds_any(std::string(real.rbegin(), real.rend()), values));
  CHECK_FALSE(holds_any(b64("sk-ant-ort01-OTHERVALUEBBB-0123456789"), values));  // the control: another value
}

TEST_CASE("output scan: a value split across pieces of stdout is found; memory stays the window") {
  OutputScan scan;
  std::string real = "sk-ant-oat01-REALACCESSAAAA";
  scan.arm(exposure_values({real}));
  std::string out = std::string(100000, 'x') + real + "\n";
  for (std::size_t at = 0; at < out.size(); at += 7) scan.feed(1, std::string_view(out).substr(at, 7));
  scan.feed(2, "nothing here");
  CHECK(scan.found() == std::vector<std::string>{"(stdout)"});
  CHECK_FALSE(scan.exhausted());
}
