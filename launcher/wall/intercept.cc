// Inject mode's connection (docs/EGRESS.md "Inject mode"): the agent's TLS is terminated with the
// session CA's leaf for the CONNECT host (never for the SNI or a Host field), each decrypted request
// goes through the RequestRewriter (egress/inject.h), and what it lets through goes to the
// upstream over a second, verified TLS connection. Responses stream back as they come. One thread,
// non-blocking sockets, poll; both buffers are bounded (kBuffer), whatever the agent or upstream do.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "base/util.h"
#include "egress/decision.h"
#include "launcher/wall/proxy.h"
#include "launcher/wall/tls.h"

namespace asbx {
namespace {

constexpr std::size_t kBuffer = 64 * 1024;
constexpr std::int64_t kHandshakeMs = 10'000;
constexpr int kPollCapMs = 50;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Waits until the TLS step can go on; false on timeout or stop.
bool wait_tls(SSL* ssl, int rc, int stop_fd, std::int64_t until) {
  int err = SSL_get_error(ssl, rc);
  short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
  if (!events) return false;
  std::int64_t left = until - now_ms();
  if (left <= 0) return false;
  pollfd p[2] = {{SSL_get_fd(ssl), events, 0}, {stop_fd, POLLIN, 0}};
  int n = ::poll(p, 2, static_cast<int>(std::min<std::int64_t>(left, 60'000)));
  return (n > 0 || (n < 0 && errno == EINTR)) && !p[1].revents;
}

template <typename Step>
bool handshake(SSL* ssl, Step step, int stop_fd, std::int64_t until) {
  while (true) {
    int rc = step(ssl);
    if (rc == 1) return true;
    if (!wait_tls(ssl, rc, stop_fd, until)) return false;
  }
}

// One SSL_read into `into` (room permitting): >0 bytes, 0 nothing now, -1 closed or broken.
int tls_read(SSL* ssl, std::string& into) {
  char chunk[16384];
  int n = SSL_read(ssl, chunk, sizeof chunk);
  if (n > 0) return into.append(chunk, static_cast<std::size_t>(n)), n;
  int err = SSL_get_error(ssl, n);
  return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

// One SSL_write of what `from` holds: >0 bytes sent (erased), 0 not now, -1 broken.
int tls_write(SSL* ssl, std::string& from) {
  int n = SSL_write(ssl, from.data(), static_cast<int>(std::min<std::size_t>(from.size(), 1 << 20)));
  if (n > 0) return from.erase(0, static_cast<std::size_t>(n)), n;
  int err = SSL_get_error(ssl, n);
  return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

std::string token_response(const TokenAnswer& a) {
  return "HTTP/1.1 " + std::to_string(a.status) + (a.status == 200 ? " OK" : " Too Many Requests") + "\r\ncontent-type: application/json\r\ncache-control: no-store\r\n"
         "content-length: " + std::to_string(a.body.size()) + "\r\n" + (a.status == 200 ? "" : "connection: close\r\n") +
         "\r\n" + a.body;
}

}  // namespace

constexpr std::int64_t kQuietMs = 250;

struct EgressProxy::Intercept {
  SSL* agent = nullptr;
  SSL* up = nullptr;
  std::optional<RequestRewriter> rewriter;
  std::string to_up, to_agent;
  bool agent_eof = false, up_eof = false, closing = false, broken = false;
  std::string refusal;            // the answer to a refused request, sent once what went before is answered
  std::int64_t last_up_byte = 0;  // steady ms
  std::int64_t out = 0, in = 0;
  // A refusal follows the answers to what the agent sent before it (clients do not pipeline, but
  // send the next request as soon as the last response arrived): once everything before it went
  // upstream and the upstream has said nothing for kQuietMs (or has closed).
  bool refusal_due() const {
    if (refusal.empty() || !to_up.empty()) return false;
    return !up || up_eof || now_ms() - last_up_byte >= kQuietMs;
  }
  ~Intercept() {
    if (agent) SSL_free(agent);
    if (up) SSL_free(up);
  }
};

// The steps: both handshakes, then the pump; the tally and the sockets at the end.
void EgressProxy::intercept(Conn& c, int up) {
  Intercept x;
  bool ready = c.first.empty() && handshake_agent(x, c) && (up < 0 || handshake_upstream(x, c, up));
  if (ready) {
    tally_.connection(c.host, c.dest.port);
    pump(x, c);
    tally_.bytes(c.host, c.dest.port, x.out, x.in);
  }
  if (x.agent && ready) SSL_shutdown(x.agent);
  if (x.up) SSL_shutdown(x.up);
  ::close(c.fd);
  if (up >= 0) ::close(up);
}

bool EgressProxy::handshake_agent(Intercept& x, Conn& c) {
  SSL_CTX* ctx = inject_.ca->server_for(c.host);
  if (!ctx) return false;  // not one of the CA's hosts: no leaf, ever
  x.agent = SSL_new(ctx);
  SSL_set_fd(x.agent, c.fd);
  if (!handshake(x.agent, SSL_accept, stop_pipe_[0], std::min(c.end, now_ms() + kHandshakeMs))) {
    log_("egress: TLS with the agent for " + c.host + " failed: " + tls_errors());
    return false;
  }
  const char* sni = SSL_get_servername(x.agent, TLSEXT_NAMETYPE_host_name);
  if (auto why = sni ? check_sni(c.host, sni) : std::optional<std::string>(refusal::sni_missing)) {
    note_refusal(c.host, c.dest.port, *why, sni ? "TLS name " + printable_host(sni) : "");
    return false;
  }
  x.rewriter.emplace(*c.rule, c.host, *inject_.book);
  return true;
}

// Verified against the system store and the seat's upstream_ca, for the CONNECT host's name.
bool EgressProxy::handshake_upstream(Intercept& x, Conn& c, int up) {
  x.up = SSL_new(inject_.upstream);
  SSL_set_fd(x.up, up);
  SSL_set_tlsext_host_name(x.up, c.host.c_str());
  X509_VERIFY_PARAM_set1_host(SSL_get0_param(x.up), c.host.c_str(), 0);
  if (handshake(x.up, SSL_connect, stop_pipe_[0], std::min(c.end, now_ms() + kHandshakeMs))) return true;
  std::string why = tls_errors();
  long verify = SSL_get_verify_result(x.up);
  if (verify != X509_V_OK) why = X509_verify_cert_error_string(verify);
  note_refusal(c.host, c.dest.port, refusal::unreachable, "upstream TLS: " + why);
  x.to_agent = refusal_answer(502, c.host, c.dest.port, refusal::unreachable);
  while (!x.to_agent.empty() && tls_write(x.agent, x.to_agent) >= 0 && wait_tls(x.agent, -1, stop_pipe_[0], now_ms() + 2000)) {
  }
  return false;
}

// The agent's decrypted bytes through the rewriter; false when the connection must end.
bool EgressProxy::from_agent(Intercept& x, Conn& c, std::string_view bytes) {
  while (true) {
    std::size_t used = 0;
    RequestRewriter::Status s = x.rewriter->feed(bytes, x.to_up, used);
    bytes.remove_prefix(used);
    for (int n = x.rewriter->take_swapped(); n > 0; --n) inject_.book->injected(c.host);
    if (int n = x.rewriter->take_elsewhere()) inject_.book->elsewhere(n);
    if (s == RequestRewriter::Status::more) return true;
    if (s == RequestRewriter::Status::token) {
      answer_refresh(x, c);
      if (x.closing) return false;
      continue;
    }
    note_refusal(c.host, c.dest.port, x.rewriter->reason(), x.rewriter->detail());
    x.refusal = refusal_answer(x.rewriter->refusal_status(), c.host, c.dest.port, x.rewriter->reason());
    x.closing = true;
    return false;
  }
}

void EgressProxy::answer_refresh(Intercept& x, Conn& c) {
  auto now = static_cast<std::int64_t>(std::time(nullptr));
  std::int64_t left = inject_.access_expires_unix ? inject_.access_expires_unix - now : 0;
  TokenAnswer a = answer_token(x.rewriter->rule().token_answer, inject_.originals, *inject_.book, random_bytes, now,
                               answered_expires_in(left, inject_.refresh_skew_s));
  x.to_agent += token_response(a);
  x.rewriter->token_answered();
  if (a.status == 200) return;
  // Past the limit the answer closes the connection, on record: a client pipelining refreshes
  // gets one 429 per connection (each costs it a TLS handshake), not one per request forever.
  note_refusal(c.host, c.dest.port, refusal::refresh_limit,
               "token refreshes answered: " + std::to_string(kMaxRefreshAnswers) + "; the connection is closed");
  x.closing = true;
}

// Until either side ends, the idle or total limit passes, or stop(): read what there is room
// for, write what is waiting, poll when nothing moved.
void EgressProxy::pump(Intercept& x, Conn& c) {
  std::int64_t last = now_ms();
  while (!x.broken) {
    std::int64_t now = now_ms(), until = std::min(c.end, last + plan_.idle_ms);
    if (now >= until) {
      log_("egress: closed " + c.host + ":443: " + (now >= c.end ? "the connection's total limit passed" : "idle limit passed"));
      return;
    }
    bool moved = false;
    // Backpressure both ways: nothing more is read from the agent while what goes up, or what the
    // wall answers it itself (a token answer, a refusal), waits for room. One read's answers are
    // bounded too (a 16 KiB read holds a few hundred token requests at most, each answered once).
    bool read_agent = !x.agent_eof && !x.closing && x.to_up.size() < kBuffer && x.to_agent.size() < kBuffer;
    bool read_up = x.up && !x.up_eof && x.to_agent.size() < kBuffer;
    if (read_agent) {
      std::string got;
      int n = tls_read(x.agent, got);
      if (n < 0) x.agent_eof = true;
      if (n > 0) from_agent(x, c, got);
      moved |= n > 0 || SSL_pending(x.agent) > 0;
    }
    if (x.up && !x.to_up.empty()) {
      int n = tls_write(x.up, x.to_up);
      x.broken |= n < 0;
      x.out += std::max(n, 0);
      moved |= n > 0;
    }
    if (read_up) {
      int n = tls_read(x.up, x.to_agent);
      if (n < 0) x.up_eof = true;
      if (n > 0) x.last_up_byte = now_ms();
      x.in += std::max(n, 0);
      moved |= n > 0 || SSL_pending(x.up) > 0;
    }
    if (!x.to_agent.empty()) {
      int n = tls_write(x.agent, x.to_agent);
      x.broken |= n < 0;
      moved |= n > 0;
    }
    if (x.refusal_due()) x.to_agent += std::exchange(x.refusal, std::string());
    bool agent_done = x.agent_eof && x.to_up.empty();  // the agent closed: nothing more is wanted
    if (x.to_agent.empty() && x.refusal.empty() && (x.closing || x.up_eof || agent_done)) return;
    if (moved) {
      last = now_ms();
      continue;
    }
    // Only the directions with room are polled for input: a held agent's unread bytes must not
    // wake the loop at once, forever (the cap below still retries a TLS step that wants a read).
    pollfd p[3] = {{stop_pipe_[0], POLLIN, 0}, {c.fd, short(read_agent ? POLLIN : 0), 0},
                   {x.up ? SSL_get_fd(x.up) : -1, short(read_up ? POLLIN : 0), 0}};
    if (!x.to_agent.empty()) p[1].events |= POLLOUT;
    if (!x.to_up.empty()) p[2].events |= POLLOUT;
    int n = ::poll(p, 3, static_cast<int>(std::min<std::int64_t>(until - now, kPollCapMs)));
    if (n > 0 && p[0].revents) return;
  }
}

}  // namespace asbx
