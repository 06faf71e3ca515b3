// Inject mode's decisions (docs/EGRESS.md "Inject mode"). Pure: the proxy (launcher/wall/
// intercept.cc) terminates TLS for an inject host and feeds the agent's decrypted bytes through
// a RequestRewriter; what comes out is exactly what goes upstream. Every request head is read,
// its path judged against the host's rules, its Authorization/x-api-key placeholder swapped for
// the real value (nowhere else: a placeholder in the target, another field or the body is
// counted, never replaced), its Host field regenerated from the CONNECT target; the body is
// streamed through the framer of egress/http_forward.h. Keep-alive: one head after another.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/egress_plan.h"
#include "credtable/placeholder.h"
#include "egress/http_forward.h"
#include "egress/http_head.h"

namespace asbx {

namespace refusal {
inline constexpr const char* inject_path_denied = "inject_path_denied";  // not on the host's allowlist, or denied
inline constexpr const char* websocket_refused = "websocket_refused";    // Upgrade: websocket on an inject host (426)
inline constexpr const char* refresh_limit = "refresh_limit";            // past kMaxRefreshAnswers a session (429)
inline constexpr const char* inject_method_refused = "inject_method_refused";  // a method the CLIs never use (405)
inline constexpr const char* credential_repeated = "credential_repeated";  // two Authorization/x-api-key fields (400)
inline constexpr const char* upgrade_refused = "upgrade_refused";          // Upgrade other than websocket, h2c (426)
}  // namespace refusal

// The inject or refresh rule of a host (normalised), or nullptr.
const InjectHost* inject_rule(const EgressPlan& plan, const std::string& host);
// nullopt = the path may go; else why not (for the stderr line). Targets must be origin-form;
// dot segments, encoded '/', '.', '\' and NUL are refused (any doubt fails closed).
std::optional<std::string> check_inject_path(const InjectHost& rule, const std::string& method, const std::string& target);

// The session's placeholders → real values and the counters of their use. Thread-safe: every
// intercepted connection shares it, and a refresh answer adds new placeholders.
class SecretBook {
 public:
  // `wire`: the wall may put `real` on the wire for this placeholder (the access token or API key:
  // on_the_wire); a refresh or id token's placeholder is only looked for, never swapped.
  void add(const std::string& placeholder, const std::string& real, bool wire = true);
  // The real value for a placeholder the wall may swap; nullopt for any other.
  std::optional<std::string> real_of(const std::string& placeholder) const;
  // Placeholders (any of them) occurring in `text`.
  int count_in(std::string_view text) const;
  // The real values, for the end-of-session secret scan.
  std::vector<std::string> real_values() const;
  std::size_t longest() const;
  std::size_t size() const;  // placeholders known
  void injected(const std::string& host);
  // Takes one of the session's refresh answers, under the lock: false once `limit` were taken.
  // (Connections answer refreshes concurrently: a check and a later count let two through at 99.)
  bool take_refresh(std::int64_t limit);
  void elsewhere(int n);
  struct Counts {
    std::map<std::string, std::int64_t> injected;
    std::int64_t refreshes_answered = 0, placeholder_elsewhere = 0;
  };
  Counts counts() const;
  bool empty() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> real_;  // placeholder → real
  std::set<std::string> wire_;               // the placeholders real_of answers
  std::size_t longest_ = 0;
  Counts counts_;
};

// True for a credential field whose value a request needs on the wire (the access token, the API
// key: "claudeAiOauth.accessToken", "tokens.access_token", "OPENAI_API_KEY"); false for the refresh
// and id tokens, which only the wall's own token answer stands in for (never forwarded).
bool on_the_wire(const std::string& field);

// The methods and the hop-by-hop fields of a request on an inject host (egress/inject_head.cc),
// as the real CLIs were measured to send them (docs/EGRESS.md "Inject mode"): GET and POST;
// Connection, Keep-Alive, TE, Trailer, Proxy-* dropped from what goes up; Upgrade refused (426:
// websocket_refused or upgrade_refused), so is HTTP2-Settings; a second Authorization or x-api-key
// field refused (400): one request, one credential, one swap.
struct HeadRefusal {
  int status;
  const char* reason;
  std::string why;
};
inline constexpr const char* kInjectMethods[] = {"GET", "POST"};
std::optional<HeadRefusal> check_inject_head(const RequestHead& head);

struct HeadRewrite {
  std::string head;  // what goes upstream
  int swapped = 0;   // placeholders replaced (Authorization: Bearer, x-api-key)
  int elsewhere = 0;  // placeholders seen in the target or other fields (left as they are)
};
// The forwarded head: request line as sent, Host from `authority`, the agent's fields but Host and
// the hop-by-hop ones, with a wire placeholder swapped in `authorization: Bearer P` or
// `x-api-key: P` only (check_inject_head let one of them through at most).
HeadRewrite rewrite_head(const RequestHead& head, const std::string& authority, const SecretBook& book);

// The token endpoint's answer: fresh placeholders (added to the book) standing for the same real
// values, in the vendor's shape. "openai": {access_token, id_token, refresh_token}, the JWTs'
// `exp` restamped to now + expires_in; "anthropic": {access_token, refresh_token, expires_in,
// scope, token_type}.
struct TokenAnswer {
  int status = 200;
  std::string body;  // JSON
};
// Past kMaxRefreshAnswers a session the answer is 429 and adds nothing: each answer adds
// placeholders to the book, and an agent posting to the token endpoint in a loop must not grow
// the launcher (or the work of every body scan) without bound. A CLI refreshes about once an hour
// (answered_expires_in), so the limit is never met by one.
inline constexpr std::int64_t kMaxRefreshAnswers = 100;
TokenAnswer answer_token(const std::string& shape, const std::vector<SecretSwap>& originals, SecretBook& book,
                         const RandomBytes& random, std::int64_t now_unix, std::int64_t expires_in);
// How long the answered placeholders say they last: the real token's time left, but at least the
// CLI's refresh skew + an hour. The real token outlasts the session (the lifetime preflight judges
// it); a placeholder stamped with an expiry inside the CLI's skew would have the CLI refresh
// before every request (codex does), so it is told it may wait an hour. real_left_s 0 = unknown.
std::int64_t answered_expires_in(std::int64_t real_left_s, std::int64_t refresh_skew_s);

// The agent's side of one intercepted connection, as a state machine: feed() the decrypted
// bytes; what goes upstream is appended to `up`. It stops at each decision the proxy must act on.
class RequestRewriter {
 public:
  enum class Status {
    more,       // feed more
    refused,    // answer `status` + reason and close (nothing of this request went up)
    token,      // a complete request to the refresh host's token endpoint: answer it locally
  };
  RequestRewriter(const InjectHost& rule, std::string authority, const SecretBook& book);
  // Consumes what it can; stops early (returning refused/token) with the rest unconsumed.
  Status feed(std::string_view in, std::string& up, std::size_t& consumed);
  int refusal_status() const { return status_code_; }
  const std::string& reason() const { return reason_; }
  const std::string& detail() const { return detail_; }
  // Counters of the last feed(): swapped in heads, placeholders seen elsewhere (heads and bodies).
  int take_swapped() { return std::exchange(swapped_, 0); }
  int take_elsewhere() { return std::exchange(elsewhere_, 0); }
  // After a token answer: the next request may begin.
  void token_answered();
  bool between_requests() const { return state_ == State::head; }
  const InjectHost& rule() const { return rule_; }

  static constexpr std::size_t kMaxTokenBody = 64 * 1024;

 private:
  enum class State { head, body, token_body, stopped };
  Status start_request(std::string& up);
  Status refuse(int status, const char* reason, std::string detail);
  void scan_body(std::string_view bytes);

  InjectHost rule_;
  std::string authority_;
  const SecretBook& book_;
  State state_ = State::head;
  std::string pending_;  // bytes of a head not complete yet
  std::optional<BodyFramer> body_;
  std::string carry_;    // the body's last bytes, so a placeholder split between reads is still seen
  std::string token_body_;
  int status_code_ = 0, swapped_ = 0, elsewhere_ = 0, blank_lines_ = 0;
  static constexpr int kMaxBlankLines = 4;
  std::string reason_, detail_;
};

}  // namespace asbx
