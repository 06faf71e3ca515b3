// The proxy the launcher serves behind the door: it accepts the agent's connections, decides
// each destination (decision.h), resolves allowed names on the seat, and relays bytes with an
// idle and a total limit per connection and a bound on open connections. One thread accepts;
// each connection has its own thread. Refusals: an HTTP 403 naming the reason to the agent,
// one stderr line, and the tally.
#pragma once
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/address.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;
#include "credtable/placeholder.h"
#include "egress/http_forward.h"
#include "egress/inject.h"
#include "egress/policy.h"
#include "egress/tally.h"

namespace asbx {

// Name → addresses on the seat (getaddrinfo by default); tests may replace it.
using Resolver = std::function<std::vector<IpAddress>(const std::string& host)>;
std::vector<IpAddress> resolve_on_seat(const std::string& host);

class SessionCa;
// Inject mode's parts, owned by the wall (launcher/wall/wall.cc) and outliving the proxy.
struct InjectParts {
  SessionCa* ca = nullptr;             // leaves for the plan's inject/refresh hosts only
  SSL_CTX* upstream = nullptr;         // the upstream leg: system store + the seat's upstream_ca
  SecretBook* book = nullptr;          // placeholder → real, and the counters for the record
  std::vector<SecretSwap> originals;   // the staged file's swaps (the token answer's shape)
  std::int64_t access_expires_unix = 0;  // the real access token's expiry (0 = unknown)
  std::int64_t refresh_skew_s = 0;       // how long before its expiry the CLI refreshes
};

// The answer to the agent when the proxy refuses: "HTTP/1.1 STATUS ..." naming the reason.
std::string refusal_answer(int status, const std::string& host, int port, const std::string& reason);

class EgressProxy {
 public:
  // Takes ownership of listen_fd; serves until stop(). `log` gets one line per refusal.
  EgressProxy(int listen_fd, EgressPlan plan, std::function<void(const std::string&)> log,
              Resolver resolver = resolve_on_seat, InjectParts inject = {});
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;
  // Closes the door and every connection; joins the threads. Idempotent.
  void stop();
  const EgressTally& tally() const { return tally_; }

 private:
  // One agent connection, as serve() learns it.
  struct Conn {
    int fd = -1;
    std::int64_t end = 0;        // the connection's total limit (steady ms)
    std::string buf;             // what the agent sent so far
    RequestHead head;
    Destination dest;
    std::string host;            // normalised; what every decision names
    ForwardPlan forwarding;      // plain HTTP only
    std::string first;           // bytes after the head
    const InjectHost* rule = nullptr;  // an inject or refresh host: TLS is terminated here
  };
  void accept_loop();
  void serve(int fd);
  bool read_head(Conn& c);
  bool decide(Conn& c);           // false: refused (the connection is closed)
  int open_upstream(Conn& c);     // -1: refused
  bool establish(Conn& c, int up);  // the 200 to a CONNECT; false: closed
  bool check_hello(Conn& c, int up);  // the ClientHello's name; false: refused, both closed
  void relay(int agent, int up, const std::string& first, const std::string& host, int port, std::int64_t end);
  // Plain HTTP (forward.cc): one checked request, its body through the framer, the answer back.
  struct Forwarding;
  void forward(int agent, int up, const ForwardPlan& plan, const std::string& early, const std::string& host, int port,
               std::int64_t end);
  bool step(Forwarding& f, int agent, int up, std::int64_t wait_ms, std::int64_t& last);
  // The tally and one stderr line ("egress: refused HOST:PORT: REASON (DETAIL)").
  void note_refusal(const std::string& host, int port, const std::string& reason, const std::string& detail = "");
  // note_refusal, an HTTP answer of `status` (none when 0), and the connection closed.
  void refuse(int fd, const std::string& host, int port, const std::string& reason, int status = 403,
              const std::string& detail = "");
  void reap_finished();
  // Inject mode (intercept.cc): TLS terminated with the session CA's leaf for c.host; each request
  // judged and rewritten (egress/inject.h); the upstream leg verified (up < 0: a refresh host).
  struct Intercept;
  void intercept(Conn& c, int up);
  bool handshake_agent(Intercept& x, Conn& c);
  bool handshake_upstream(Intercept& x, Conn& c, int up);
  void pump(Intercept& x, Conn& c);
  bool from_agent(Intercept& x, Conn& c, std::string_view bytes);
  void answer_refresh(Intercept& x, Conn& c);

  int listen_fd_;
  int stop_pipe_[2] = {-1, -1};  // readable once stop() ran: every poll watches it
  EgressPlan plan_;
  std::function<void(const std::string&)> log_;
  Resolver resolver_;
  InjectParts inject_;
  EgressTally tally_;
  std::atomic<int> active_{0};
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Worker> workers_;  // only the accept thread touches it until stop() joins it
  std::thread acceptor_;
  bool stopped_ = false;
};

}  // namespace asbx
