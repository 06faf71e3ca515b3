// Inject mode's pure parts: placeholders (credtable/placeholder.h), the credential table's
// inject rows, the path decisions, the head rewrite, the keep-alive rewriter and the token
// answer (egress/inject.h), and the lifetime rule in inject mode.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "credtable/credtable.h"
#include "credtable/lifetime.h"
#include "credtable/placeholder.h"
#include "egress/inject.h"
#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/secret_scan.h"
#include "tests/unit/temp_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace asbx;
using nlohmann::json;

namespace {

// A fixed "random" source: counts up, so every placeholder is different and reproducible.
RandomBytes counting() {
  auto n = std::make_shared<int>(0);
  return [n](std::size_t size) {
    std::string out(size, '\0');
    for (auto& c : out) c = static_cast<char>((*n)++ & 0xff);
    return out;
  };
}

std::string b64url(const std::string& s) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : s) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) out += a[(val >> bits) & 0x3f], bits -= 6;
  }
  if (bits > -6) out += a[((val << 8) >> (bits + 8)) & 0x3f];
  return out;
}

std::string jwt(const json& claims) {
  return b64url(R"({"alg":"RS256","typ":"JWT"})") + "." + b64url(claims.dump()) + "." + b64url(std::string(64, 'S'));
}

const std::string kCredtable = std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml";

InjectHost claude_api() {
  for (const auto& h : inject_hosts_of(find_row(load_credtable(kCredtable), "claude")))
    if (h.host == "api.anthropic.com") return h;
  FAIL("no api.anthropic.com row");
  return {};
}

}  // namespace

TEST_CASE("placeholder: a JWT keeps header and claims, gets a new signature of the same length") {
  std::string real = jwt({{"exp", 1900000000}, {"https://api.openai.com/auth", {{"chatgpt_account_id", "acc-1"}}}});
  std::string p = make_placeholder(real, counting());
  CHECK(p != real);
  CHECK(p.size() == real.size());
  CHECK(p.substr(0, p.rfind('.')) == real.substr(0, real.rfind('.')));
  CHECK(looks_like_jwt(p));
}

TEST_CASE("placeholder: an opaque token keeps its prefix and length") {
  for (std::string real : {"sk-ant-oat01-abcdefghijklmnopqrstuvwxyz0123456789", "sk-proj-ABCDEFGHIJKLMNOP1234",
                           "rt_abcdefghijklmnopqrstuvwxyz"}) {
    std::string p = make_placeholder(real, counting());
    CHECK(p.size() == real.size());
    CHECK(p != real);
    std::size_t cut = real.find_last_of("-_", 15);
    CHECK(p.substr(0, cut + 1) == real.substr(0, cut + 1));
  }
}

TEST_CASE("placeholder file: codex ChatGPT shape, ids and claims kept, every secret swapped") {
  std::string access = jwt({{"exp", 1900000000}}), id = jwt({{"email", "a@b.c"}});
  json file = {{"auth_mode", "chatgpt"}, {"OPENAI_API_KEY", nullptr},
               {"tokens", {{"access_token", access}, {"id_token", id}, {"refresh_token", "rt_REALREFRESHTOKEN0123"},
                           {"account_id", "acc-1"}}},
               {"last_refresh", "2026-01-01T00:00:00Z"}};
  CredRow row = find_row(load_credtable(kCredtable), "codex");
  PlaceholderFile out = make_placeholder_file(row.secrets, file.dump(), counting());
  REQUIRE(out.recognised);
  CHECK(out.swaps.size() == 3);
  for (const auto& s : out.swaps) CHECK(out.text.find(s.real) == std::string::npos);
  json back = json::parse(out.text);
  CHECK(back["tokens"]["account_id"] == "acc-1");
  CHECK(back["auth_mode"] == "chatgpt");
  CHECK(back["OPENAI_API_KEY"].is_null());
  CHECK(read_lifetime(row.lifetime, out.text).expires_unix == std::optional<std::int64_t>(1900000000));
}

TEST_CASE("placeholder file: codex API-key shape and claude OAuth shape") {
  CredTable t = load_credtable(kCredtable);
  PlaceholderFile key = make_placeholder_file(find_row(t, "codex").secrets,
                                              R"({"OPENAI_API_KEY":"sk-proj-REALKEY0123456789abcdef"})", counting());
  REQUIRE(key.recognised);
  CHECK(key.swaps.at(0).placeholder.rfind("sk-proj-", 0) == 0);
  std::string claude = R"({"claudeAiOauth":{"accessToken":"sk-ant-oat01-REALACCESS0123456789","refreshToken":"sk-ant-ort01-REALREFRESH012345",)"
                       R"("expiresAt":1900000000000,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}})";
  PlaceholderFile c = make_placeholder_file(find_row(t, "claude").secrets, claude, counting());
  REQUIRE(c.recognised);
  json back = json::parse(c.text);
  CHECK(back["claudeAiOauth"]["scopes"] == json::array({"user:inference", "user:profile"}));
  CHECK(back["claudeAiOauth"]["expiresAt"] == 1900000000000);
  CHECK(back["claudeAiOauth"]["accessToken"].get<std::string>().rfind("sk-ant-oat01-", 0) == 0);
  CHECK(c.text.find("REALACCESS") == std::string::npos);
}

TEST_CASE("placeholder file: shapes it does not know stay in copy mode") {
  std::vector<std::string> secrets = {"claudeAiOauth.accessToken"};
  CHECK_FALSE(make_placeholder_file(secrets, "not json", counting()).recognised);
  CHECK_FALSE(make_placeholder_file(secrets, "{}", counting()).recognised);
  CHECK_FALSE(make_placeholder_file(secrets, R"({"claudeAiOauth":{"accessToken":42}})", counting()).recognised);
}

TEST_CASE("credtable: codex and claude can inject, cursor-agent cannot; claude reaches platform.claude.com") {
  CredTable t = load_credtable(kCredtable);
  CHECK(find_row(t, "codex").can_inject());
  CHECK(find_row(t, "claude").can_inject());
  CHECK_FALSE(find_row(t, "cursor-agent").can_inject());
  const auto& egress = find_row(t, "claude").egress;
  CHECK(std::find(egress.begin(), egress.end(), "platform.claude.com") != egress.end());
  auto hosts = inject_hosts_of(find_row(t, "codex"));
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[2].host == "auth.openai.com");
  CHECK(hosts[2].refresh);
  CHECK(hosts[2].token_path == "/oauth/token");
}

TEST_CASE("credtable: inject rows are checked") {
  auto row = [](const std::string& extra) {
    return "[[runtime]]\nname = \"x\"\nsource = \"~/.x\"\ndestination = \".x\"\n" + extra;
  };
  CHECK_THROWS_WITH_AS(parse_credtable(row("inject_hosts = [\"a.test\"]\n"), "/t.toml"),
                       "/t.toml:1: runtime 'x': inject_hosts needs 'secrets'", Error);
  CHECK_THROWS_WITH_AS(parse_credtable(row("secrets = [\"k\"]\ninject_hosts = [\"a.test\"]\ninject_allow = [\"b.test/v1/\"]\n"), "/t.toml"),
                       "/t.toml:1: runtime 'x': inject_allow 'b.test/v1/' must be HOST/PATH with HOST one of inject_hosts", Error);
  CHECK_THROWS_WITH_AS(parse_credtable(row("secrets = [\"k\"]\ninject_hosts = [\"a.test\"]\nrefresh_hosts = [\"t.test\"]\n"), "/t.toml"),
                       "/t.toml:1: runtime 'x': refresh_hosts needs 'token_path' (an absolute path)", Error);
  CredTable ok = parse_credtable(row("secrets = [\"k\"]\ninject_hosts = [\"A.Test.\"]\n"), "/t.toml");
  CHECK(ok.rows[0].inject_hosts == std::vector<std::string>{"a.test"});
}

TEST_CASE("inject paths: allowlist, deny list first, doubtful paths refused, token host serves one endpoint") {
  InjectHost api = claude_api();
  CHECK_FALSE(check_inject_path(api, "POST", "/v1/messages?beta=true"));
  CHECK_FALSE(check_inject_path(api, "GET", "/api/oauth/profile"));
  CHECK(check_inject_path(api, "GET", "/api/oauth/profile2"));
  CHECK(check_inject_path(api, "POST", "/api/oauth/claude_cli/create_api_key"));
  CHECK(check_inject_path(api, "POST", "/v1/organizations/api_keys"));
  CHECK(check_inject_path(api, "POST", "/V1/Organizations/api_keys"));  // not allowed either way
  CHECK(check_inject_path(api, "GET", "/v1/../api/oauth/claude_cli/create_api_key"));
  CHECK(check_inject_path(api, "GET", "/v1/%2e%2e/x"));
  CHECK(check_inject_path(api, "GET", "/v1//x"));
  CHECK(check_inject_path(api, "GET", "https://api.anthropic.com/v1/messages"));
  InjectHost token{"platform.claude.com", "claude", true, {}, {}, "/v1/oauth/token", "anthropic"};
  CHECK_FALSE(check_inject_path(token, "POST", "/v1/oauth/token"));
  CHECK(check_inject_path(token, "GET", "/v1/oauth/token"));
  CHECK(check_inject_path(token, "POST", "/v1/oauth/authorize"));
}

TEST_CASE("inject rule: the CONNECT host is normalised before the lookup") {
  EgressPlan plan;
  plan.inject = {claude_api()};
  CHECK(inject_rule(plan, "API.Anthropic.COM.") != nullptr);
  CHECK(inject_rule(plan, "api.anthropic.com") != nullptr);
  CHECK(inject_rule(plan, "api.anthropic.com.evil.test") == nullptr);
}

TEST_CASE("head rewrite: one Authorization Bearer or x-api-key swapped, once; Host from the CONNECT target") {
  SecretBook book;
  book.add("PLACEHOLDER-0123456789", "REALTOKEN-0123456789");
  RequestHead head = parse_request_head(
      "POST /v1/messages?key=PLACEHOLDER-0123456789 HTTP/1.1\r\nHost: evil.test\r\nAuthorization: Bearer PLACEHOLDER-0123456789\r\n"
      "x-api-key: PLACEHOLDER-0123456789\r\nChatGPT-Account-Id: acc-1\r\nX-Other: PLACEHOLDER-0123456789\r\n"
      "Proxy-Authorization: Basic Zm9v\r\n\r\n");
  REQUIRE(head.status == RequestHead::Status::ok);
  HeadRewrite rw = rewrite_head(head, "api.anthropic.com", book);
  CHECK(rw.swapped == 1);  // check_inject_head refuses the second credential field before this
  CHECK(rw.elsewhere == 3);
  CHECK(rw.head ==
        "POST /v1/messages?key=PLACEHOLDER-0123456789 HTTP/1.1\r\nhost: api.anthropic.com\r\nauthorization: Bearer REALTOKEN-0123456789\r\n"
        "x-api-key: PLACEHOLDER-0123456789\r\nchatgpt-account-id: acc-1\r\nx-other: PLACEHOLDER-0123456789\r\n\r\n");
}

TEST_CASE("rewriter: keep-alive requests, bodies streamed, placeholders in bodies counted but left") {
  SecretBook book;
  book.add("sk-ant-oat01-PLACEHOLDER0000", "sk-ant-oat01-REALREALREAL00");
  InjectHost api = claude_api();
  RequestRewriter rw(api, "api.anthropic.com", book);
  std::string in =
      "POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer sk-ant-oat01-PLACEHOLDER0000\r\nContent-Length: 36\r\n\r\n"
      "{\"x\":\"sk-ant-oat01-PLACEHOLDER0000\"}"
      "GET /api/oauth/profile HTTP/1.1\r\nAuthorization: Bearer sk-ant-oat01-PLACEHOLDER0000\r\n\r\n";
  std::string up;
  for (std::size_t at = 0; at < in.size();) {  // in pieces of 5: a placeholder split between reads is still seen
    std::size_t used = 0;
    REQUIRE(rw.feed(std::string_view(in).substr(at, 5), up, used) == RequestRewriter::Status::more);
    at += used;
  }
  CHECK(rw.take_swapped() == 2);
  CHECK(rw.take_elsewhere() == 1);
  CHECK(up.find("{\"x\":\"sk-ant-oat01-PLACEHOLDER0000\"}") != std::string::npos);
  CHECK(up.find("GET /api/oauth/profile HTTP/1.1\r\nhost: api.anthropic.com\r\nauthorization: Bearer sk-ant-oat01-REALREALREAL00") !=
        std::string::npos);
  CHECK(rw.between_requests());
}

TEST_CASE("rewriter: a denied path and a WebSocket upgrade stop before anything goes up") {
  SecretBook book;
  book.add("PLACEHOLDER-0123456789", "REALTOKEN-0123456789");
  InjectHost api = claude_api();
  std::string up;
  std::size_t used = 0;
  RequestRewriter deny(api, "api.anthropic.com", book);
  CHECK(deny.feed("POST /api/oauth/claude_cli/create_api_key HTTP/1.1\r\nAuthorization: Bearer PLACEHOLDER-0123456789\r\n\r\n", up, used) ==
        RequestRewriter::Status::refused);
  CHECK(deny.refusal_status() == 403);
  CHECK(deny.reason() == "inject_path_denied");
  RequestRewriter ws(api, "api.anthropic.com", book);
  CHECK(ws.feed("GET /v1/responses HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", up, used) ==
        RequestRewriter::Status::refused);
  CHECK(ws.refusal_status() == 426);
  CHECK(up.empty());
}

TEST_CASE("rewriter + token answer: the refresh host is answered with fresh placeholders of the same shape") {
  SecretBook book;
  std::vector<SecretSwap> originals = {{"claudeAiOauth.accessToken", "sk-ant-oat01-AAAAAAAAAAAA", "sk-ant-oat01-REALACCESS00"},
                                       {"claudeAiOauth.refreshToken", "sk-ant-ort01-BBBBBBBBBBBB", "sk-ant-ort01-REALREFRESH0"}};
  for (const auto& s : originals) book.add(s.placeholder, s.real);
  InjectHost token{"platform.claude.com", "claude", true, {}, {}, "/v1/oauth/token", "anthropic"};
  RequestRewriter rw(token, "platform.claude.com", book);
  std::string body = R"({"grant_type":"refresh_token","refresh_token":"sk-ant-ort01-BBBBBBBBBBBB"})";
  std::string up;
  std::size_t used = 0;
  CHECK(rw.feed("POST /v1/oauth/token HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body, up, used) ==
        RequestRewriter::Status::token);
  CHECK(up.empty());  // nothing goes anywhere
  TokenAnswer a = answer_token("anthropic", originals, book, counting(), 1000, 1800);
  json j = json::parse(a.body);
  std::string access = j["access_token"];
  CHECK(access.rfind("sk-ant-oat01-", 0) == 0);
  CHECK(access != originals[0].placeholder);
  CHECK(book.real_of(access) == std::optional<std::string>("sk-ant-oat01-REALACCESS00"));
  CHECK(j["expires_in"] == 1800);
  CHECK(a.body.find("REAL") == std::string::npos);
  CHECK(book.counts().refreshes_answered == 1);
  rw.token_answered();
  CHECK(rw.between_requests());
  // {"exp":1} → {"exp":4600}: the CLI is told when to come again; the real JWT stays what it was
  json o = json::parse(answer_token("openai", {{"tokens.access_token", "x", "eyJhbGciOiJub25lIn0.eyJleHAiOjF9.c2ln"},
                                               {"tokens.id_token", "y", "eyJhbGciOiJub25lIn0.eyJlbWFpbCI6MX0.c2ln"},
                                               {"tokens.refresh_token", "z", "rt_REALREFRESH"}},
                                    book, counting(), 1000, 3600)
                           .body);
  std::string jwt = o["access_token"];
  CHECK(jwt.rfind("eyJhbGciOiJub25lIn0." + base64url_encode(R"({"exp":4600})") + ".", 0) == 0);
  CHECK(book.real_of(jwt) == std::optional<std::string>("eyJhbGciOiJub25lIn0.eyJleHAiOjF9.c2ln"));
  CHECK(o["refresh_token"].get<std::string>().rfind("rt_", 0) == 0);
  CHECK(o["id_token"].get<std::string>().rfind("eyJhbGciOiJub25lIn0.eyJlbWFpbCI6MX0.", 0) == 0);  // no exp: kept
}

TEST_CASE("token answers: an agent refreshing in a loop cannot grow the book past the limit") {
  SecretBook book;
  std::vector<SecretSwap> originals = {{"claudeAiOauth.accessToken", "sk-ant-oat01-AAAAAAAAAAAA", "sk-ant-oat01-REALACCESS00"},
                                       {"claudeAiOauth.refreshToken", "sk-ant-ort01-BBBBBBBBBBBB", "sk-ant-ort01-REALREFRESH0"}};
  for (std::int64_t i = 0; i < kMaxRefreshAnswers; ++i)
    REQUIRE(answer_token("anthropic", originals, book, asbx::random_bytes, 1000, 3600).status == 200);
  CHECK(book.size() == 2 * static_cast<std::size_t>(kMaxRefreshAnswers));  // each answer: two fresh placeholders
  TokenAnswer over = answer_token("anthropic", originals, book, asbx::random_bytes, 1000, 3600);
  CHECK(over.status == 429);
  CHECK(over.body == R"({"error":"too_many_refreshes","error_description":"agent-sandbox answers at most 100 token refreshes a session"})");
  CHECK(over.body.find("REAL") == std::string::npos);
  CHECK(book.counts().refreshes_answered == kMaxRefreshAnswers);
  CHECK(book.size() == 2 * static_cast<std::size_t>(kMaxRefreshAnswers));  // nothing added
}

TEST_CASE("answered placeholders: the real time left, but never inside the CLI's refresh skew") {
  CHECK(answered_expires_in(240, 300) == 3900);       // real due now: the CLI is told an hour past its skew
  CHECK(answered_expires_in(0, 300) == 3900);         // unknown expiry
  CHECK(answered_expires_in(86400, 300) == 86400);    // a long-lived real token: its own time left
  CHECK(answered_expires_in(-5, 0) == 3600);
}

TEST_CASE("restamp_exp: only the top-level exp number changes, byte for byte everything else") {
  std::string claims = R"({"nested": {"exp": 7}, "exp": 1796228012, "email": "a@b"})";
  std::string jwt = "eyJhbGciOiJSUzI1NiJ9." + base64url_encode(claims) + ".SIG-nature_x";
  std::string out = restamp_exp(jwt, 1796231612);
  CHECK(out == "eyJhbGciOiJSUzI1NiJ9." + base64url_encode(R"({"nested": {"exp": 7}, "exp": 1796231612, "email": "a@b"})") +
                   ".SIG-nature_x");
  CHECK(out.size() == jwt.size());
  CHECK(restamp_exp("sk-ant-oat01-opaque", 5) == "sk-ant-oat01-opaque");
  std::string no_exp = "eyJhbGciOiJSUzI1NiJ9." + base64url_encode(R"({"exp":"soon"})") + ".c2ln";
  CHECK(restamp_exp(no_exp, 5) == no_exp);
  CHECK(base64url_encode("") == "");
  CHECK(base64url_encode("ab?") == "YWI_");
  CHECK(base64url_decode(base64url_encode(claims)) == std::optional<std::string>(claims));
}

TEST_CASE("lifetime in inject mode: the real expiry must outlast the session, the refresh time need not") {
  LifetimeRule rule;
  rule.expiry = "e";
  rule.refresh_skew_s = 300;
  rule.refresh_command = "login";
  CredentialLifetime l;
  l.expires_unix = 1000 + 240;  // 4 minutes left: the CLI refreshes at once
  l.refresh_at_unix = 1000 - 60;
  LifetimePolicy p{1000, 90, "--timeout 1m30s", 30, true, false};
  CHECK_THROWS_AS(check_lifetime("codex", rule, l, p), Error);  // copy mode: refused
  p.injected = true;
  CredentialLifetime l2 = l;
  CHECK(check_lifetime("codex", rule, l2, p).empty());
  CHECK(l2.refresh_due);
  p.session_s = 600;  // the real token would expire inside the session: refused in inject mode too
  CHECK_THROWS_AS(check_lifetime("codex", rule, l2, p), Error);
}

TEST_CASE("secret scan: finds a value anywhere in a tree (also across read chunks), follows no symlink") {
  asbx::test::TempDir t;
  t.write("a/b/clean.txt", "nothing here");
  t.write("a/deep/found.log", std::string(256 * 1024 - 5, 'x') + "REALTOKEN-0123456789" + "tail");
  std::filesystem::create_symlink("/etc", t.dir / "a/link");
  int fd = ::open(t.s().c_str(), O_RDONLY | O_DIRECTORY);
  ScanBudget budget;
  std::vector<std::string> found = scan_tree(fd, "/top", {"REALTOKEN-0123456789"}, budget);
  ::close(fd);
  CHECK(found == std::vector<std::string>{"/top/a/deep/found.log"});
  CHECK_FALSE(budget.exhausted);
  CHECK(holds_any("x=REALTOKEN-0123456789", {"REALTOKEN-0123456789"}));

  // What an agent plants for the scan: a link to a file outside that holds the value (a false
  // "exposed" verdict), a FIFO (a hang), a name that forges a line or a colour on stderr, a
  // sparse file far beyond the bound (it stops, and says so).
  asbx::test::TempDir outside, planted;
  outside.write("host-credential.json", "{\"accessToken\": \"REALTOKEN-0123456789\"}");
  std::filesystem::create_symlink(outside.dir / "host-credential.json", planted.dir / "link");
  std::filesystem::create_directory_symlink(outside.dir, planted.dir / "dirlink");
  REQUIRE(::mkfifo((planted.dir / "fifo").c_str(), 0600) == 0);
  planted.write("x\nagent-sandbox: all clean\x1b[0m", "REALTOKEN-0123456789");
  int pfd = ::open(planted.s().c_str(), O_RDONLY | O_DIRECTORY);
  ScanBudget fresh;
  CHECK(scan_tree(pfd, "/tmp", {"REALTOKEN-0123456789"}, fresh) ==
        std::vector<std::string>{"/tmp/x?agent-sandbox: all clean?[0m"});
  {
    int big = ::open((planted.dir / "sparse").c_str(), O_WRONLY | O_CREAT, 0600);
    REQUIRE(::ftruncate(big, std::int64_t(64) << 20) == 0);
    ::close(big);
  }
  ScanBudget small;
  small.bytes = 1 << 20;
  scan_tree(pfd, "/tmp", {"REALTOKEN-0123456789"}, small);
  CHECK(small.exhausted);
  ::close(pfd);
  CHECK_FALSE(holds_any("x=REALTOKEN", {"REALTOKEN-0123456789", ""}));
}
