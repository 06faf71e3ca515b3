#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include "plan/build_plan.h"
#include "credtable/credtable.h"
#include "credtable/lifetime.h"
#include "credtable/placeholder.h"
#include "base/error.h"
#include "base/request.h"

using namespace asbx;

namespace {
CredTable shipped() { return load_credtable(std::string(ASBX_SOURCE_DIR) + "/credtable/credtable.toml"); }

std::string jwt(const std::string& claims) { return base64url_encode("{\"alg\":\"none\"}") + "." + base64url_encode(claims) + ".c2ln"; }

std::string codex_chatgpt(long exp) {
  std::string t = jwt("{\"exp\":" + std::to_string(exp) + ",\"email\":\"dev@example.com\"}");
  return "{\"auth_mode\":\"chatgpt\",\"OPENAI_API_KEY\":null,\"tokens\":{\"id_token\":\"" + t + "\",\"access_token\":\"" +
         t + "\",\"refresh_token\":\"rt-SECRET\",\"account_id\":\"acct-1\"},\"last_refresh\":\"2026-01-01T00:00:00Z\"}";
}

LifetimePolicy policy(std::int64_t now, std::int64_t session_s, bool refuse = true) {
  return {now, session_s, "--timeout " + format_duration_s(session_s), 600, refuse};
}
}  // namespace

TEST_CASE("codex: ChatGPT mode expires with the access token's exp; codex refreshes 5 minutes before") {
  CredTable table = shipped();
  CredentialLifetime l = read_lifetime(find_row(table, "codex").lifetime, codex_chatgpt(1'000'000));
  CHECK(l.auth_kind == "chatgpt");
  CHECK(l.account == "dev@example.com");
  CHECK(l.expires_unix == 1'000'000);
  CHECK(l.refresh_at_unix == 1'000'000 - 300);
}

TEST_CASE("codex: API-key mode never expires; claude OAuth expiresAt is in ms") {
  CredentialLifetime k = read_lifetime(find_row(shipped(), "codex").lifetime,
                                       R"({"auth_mode":"apikey","OPENAI_API_KEY":"sk-SECRET","tokens":null})");
  CHECK(k.auth_kind == "api_key");
  CHECK(!k.expires_unix);
  CHECK(!k.refresh_at_unix);
  CredentialLifetime c = read_lifetime(find_row(shipped(), "claude").lifetime,
                                       R"({"claudeAiOauth":{"accessToken":"sk-ant-oat01-SECRET","expiresAt":1700000000123}})");
  CHECK(c.auth_kind == "oauth");
  CHECK(c.account == "");
  CHECK(c.expires_unix == 1'700'000'000);
  CHECK(c.refresh_at_unix == 1'700'000'000 - 300);
}

TEST_CASE("files that are not JSON or match nothing are unknown and never refused") {
  LifetimeRule rule = find_row(shipped(), "codex").lifetime;
  for (const char* text : {"not json SECRET", "[1,2]", "{}", R"({"tokens":null,"OPENAI_API_KEY":""})"}) {
    CAPTURE(text);
    CredentialLifetime l = read_lifetime(rule, text);
    CHECK(l.auth_kind == "unknown");
    CHECK(!l.refresh_at_unix);
    CHECK(check_lifetime("codex", rule, l, policy(0, 3600)) == "");
  }
}

TEST_CASE("an OAuth file with an unreadable expiry is due now (fail closed)") {
  LifetimeRule rule = find_row(shipped(), "claude").lifetime;
  CredentialLifetime l = read_lifetime(rule, R"({"claudeAiOauth":{"expiresAt":"soon"}})");
  CHECK(l.auth_kind == "oauth");
  CHECK(l.refresh_at_unix == 0);
  CHECK_THROWS_WITH_AS(check_lifetime("claude", rule, l, policy(1000, 60)),
                       "the claude credential has no readable expiry and must be refreshed now, before this session "
                       "can end (--timeout 1m + margin 10m); the CLI would refresh it inside the container and rotate "
                       "the host's login. Refresh it on the host first: claude auth login",
                       Error);
  CredentialLifetime bad_jwt = read_lifetime(find_row(shipped(), "codex").lifetime,
                                             R"({"tokens":{"access_token":"opaque!"}})");
  CHECK(bad_jwt.auth_kind == "chatgpt");
  CHECK(bad_jwt.refresh_at_unix == 0);
}

TEST_CASE("the preflight rule: refresh due before now + session + margin is refused with the exact message") {
  LifetimeRule rule = find_row(shipped(), "codex").lifetime;
  const std::int64_t now = 2'000'000;
  CredentialLifetime l = read_lifetime(rule, codex_chatgpt(now + 3600 + 30 * 60 + 300 + 30));  // refresh in 1h30m30s
  try {
    check_lifetime("codex", rule, l, policy(now, 3600 + 1800));
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::credential_expiring);
    CHECK(e.exit_code() == 223);
    CHECK(std::string(e.what()) ==
          "the codex credential (account dev@example.com) must be refreshed in 1h30m, before this session can end "
          "(--timeout 1h30m + margin 10m); the CLI would refresh it inside the container and rotate the host's "
          "login. Refresh it on the host first: codex login");
  }
  CHECK(l.refresh_due);
  CredentialLifetime ok = read_lifetime(rule, codex_chatgpt(now + 3600 + 600 + 300 + 1));
  CHECK(check_lifetime("codex", rule, ok, policy(now, 3600)) == "");
  CHECK(!ok.refresh_due);
  CredentialLifetime edge = read_lifetime(rule, codex_chatgpt(now + 3600 + 600 + 300));
  CHECK_THROWS_AS(check_lifetime("codex", rule, edge, policy(now, 3600)), Error);
}

TEST_CASE("credential_expiring = warn returns the same text as a warning") {
  LifetimeRule rule = find_row(shipped(), "codex").lifetime;
  CredentialLifetime l = read_lifetime(rule, codex_chatgpt(100));
  std::string w = check_lifetime("codex", rule, l, policy(1000, 60, false));
  CHECK(w.find("the codex credential (account dev@example.com) must be refreshed now,") == 0);
  CHECK(l.refresh_due);
}

TEST_CASE("nothing read or said ever holds a token") {
  LifetimeRule rule = find_row(shipped(), "codex").lifetime;
  CredentialLifetime l = read_lifetime(rule, codex_chatgpt(100));
  std::string w = check_lifetime("codex", rule, l, policy(1000, 60, false));
  CHECK(w.find("SECRET") == std::string::npos);
  CHECK(w.find("ey") == std::string::npos);  // no JWT part (base64 of '{"')
  CHECK(l.account.find("SECRET") == std::string::npos);
}

TEST_CASE("the refresh age rule, when a row names one") {
  LifetimeRule rule;
  rule.expiry = "t.exp";
  rule.refresh_stamp = "last";
  rule.refresh_age_s = 8 * 86400;
  rule.refresh_command = "x login";
  CredentialLifetime l = read_lifetime(rule, R"({"t":{"exp":99999999},"last":"1970-01-02T00:00:00.5Z"})");
  CHECK(l.refresh_at_unix == 86400 + 8 * 86400);
  CredentialLifetime off = read_lifetime(rule, R"({"t":{"exp":99999999},"last":"1970-01-02T02:00:00+02:00"})");
  CHECK(off.refresh_at_unix == 86400 + 8 * 86400);
}

TEST_CASE("durations, RFC 3339 and base64url") {
  CHECK(format_duration_s(-5) == "0s");
  CHECK(format_duration_s(59) == "59s");
  CHECK(format_duration_s(25 * 60 + 59) == "25m");
  CHECK(format_duration_s(3600 + 5 * 60) == "1h05m");
  CHECK(format_duration_s(3 * 86400 + 4 * 3600 + 59) == "3d04h");
  CHECK(parse_rfc3339("2026-12-01T10:00:00Z") == 1796119200);
  CHECK(parse_rfc3339("2026-12-01T10:00:00.123456789Z") == 1796119200);
  CHECK(!parse_rfc3339("yesterday"));
  CHECK(!parse_rfc3339("2026-12-01T10:00:00"));
  CHECK(base64url_decode("eyJhIjoxfQ") == std::string("{\"a\":1}"));
  CHECK(!base64url_decode("e*"));
}

TEST_CASE("a bad lifetime field in the credential table names file:line") {
  const char* head = "[[runtime]]\nname = \"x\"\nsource = \"~/x\"\ndestination = \"x\"\n";
  CHECK_THROWS_WITH_AS(parse_credtable(std::string(head) + "expiry_unit = \"us\"\n", "t.toml"),
                       "t.toml:1: runtime 'x': 'expiry_unit' must be \"s\" or \"ms\"", Error);
  CHECK_THROWS_WITH_AS(parse_credtable(std::string(head) + "expiry = \"a.b\"\n", "t.toml"),
                       "t.toml:1: runtime 'x': 'expiry' needs 'refresh_command' (the remedy named when it is due)",
                       Error);
  CHECK_THROWS_WITH_AS(parse_credtable(std::string(head) + "refresh_skew = \"5 parsecs\"\n", "t.toml"),
                       "t.toml:5: refresh_skew: '5 parsecs' has an unknown unit (use ms, s, m or h)", Error);
}

namespace {
struct PlanFixture {
  std::string dir;
  std::string file;
  UserFacts user;
  SessionFacts facts;
  PlanFixture(const std::string& content) {
    char tmpl[] = "/tmp/asbx-unit-life-XXXXXX";
    dir = ::mkdtemp(tmpl);
    file = dir + "/auth.json";
    std::ofstream(file) << content;
    user.uid = 0;
    user.name = "root";
    user.home = dir;
    facts.now_unix = 2'000'000;
  }
  ~PlanFixture() { std::system(("rm -rf " + dir).c_str()); }
  LaunchPlan plan(const std::string& seat_text, const char* timeout) {
    Request r;
    r.id = "t1";
    r.runtime = "codex";
    r.credential = file;
    if (timeout) r.timeout = timeout;
    r.argv = {"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "hi"};
    return build_plan(r, parse_seat_config(seat_text, "/s/seat.toml", user), user, facts);
  }
};
}  // namespace

TEST_CASE("build_plan refuses before anything exists; the seat's horizon stands in for a missing --timeout") {
  PlanFixture f(codex_chatgpt(2'000'000 + 2 * 3600));  // refresh due in 1h55m
  LaunchPlan ok = f.plan("", "1h");
  REQUIRE(ok.credentials.size() == 1);
  CHECK(ok.credentials[0].lifetime.auth_kind == "chatgpt");
  CHECK(ok.credentials[0].lifetime.account == "dev@example.com");
  CHECK(!ok.credentials[0].lifetime.refresh_due);
  CHECK_THROWS_WITH_AS(f.plan("", nullptr),
                       "the codex credential (account dev@example.com) must be refreshed in 1h55m, before this session "
                       "can end (no --timeout: the seat's credential_horizon 4h00m + margin 10m); the CLI would "
                       "refresh it inside the container and rotate the host's login. Refresh it on the host first: "
                       "codex login",
                       Error);
  CHECK_NOTHROW(f.plan("credential_horizon = \"1h\"\n", nullptr));
  CHECK_THROWS_AS(f.plan("credential_margin = \"1h\"\n", "1h"), Error);
  LaunchPlan warned = f.plan("credential_expiring = \"warn\"\n", "3h");
  REQUIRE(warned.credential_warnings.size() == 1);
  CHECK(warned.credentials[0].lifetime.refresh_due);
}

TEST_CASE("the seat's lifetime keys are checked with file:line") {
  UserFacts u;
  u.home = "/h";
  CHECK_THROWS_WITH_AS(parse_seat_config("credential_expiring = \"maybe\"\n", "s.toml", u),
                       "s.toml:1: credential_expiring must be \"refuse\" or \"warn\"", Error);
  CHECK_THROWS_WITH_AS(parse_seat_config("credential_horizon = \"4 days\"\n", "s.toml", u),
                       "s.toml:1: credential_horizon: '4 days' has an unknown unit (use ms, s, m or h)", Error);
  SeatConfig d = parse_seat_config("", "s.toml", u);
  CHECK(d.credential_horizon_ms == 4 * 3600 * 1000);
  CHECK(d.credential_margin_ms == 600 * 1000);
  CHECK(!d.credential_expiring_warn);
}

TEST_CASE("an API-key credential is never checked") {
  PlanFixture f(R"({"auth_mode":"apikey","OPENAI_API_KEY":"sk-SECRET"})");
  LaunchPlan plan = f.plan("credential_horizon = \"1000h\"\n", nullptr);
  CHECK(plan.credentials[0].lifetime.auth_kind == "api_key");
  CHECK(plan.credential_warnings.empty());
}
