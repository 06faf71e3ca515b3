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
#include "egress/http_forward.h"
#include "egress/policy.h"
#include "egress/tally.h"

namespace asbx {

// Name → addresses on the seat (getaddrinfo by default); tests may replace it.
using Resolver = std::function<std::vector<IpAddress>(const std::string& host)>;
std::vector<IpAddress> resolve_on_seat(const std::string& host);

class EgressProxy {
 public:
  // Takes ownership of listen_fd; serves until stop(). `log` gets one line per refusal.
  EgressProxy(int listen_fd, EgressPlan plan, std::function<void(const std::string&)> log,
              Resolver resolver = resolve_on_seat);
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;
  // Closes the door and every connection; joins the threads. Idempotent.
  void stop();
  const EgressTally& tally() const { return tally_; }

 private:
  void accept_loop();
  void serve(int fd);
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

  int listen_fd_;
  int stop_pipe_[2] = {-1, -1};  // readable once stop() ran: every poll watches it
  EgressPlan plan_;
  std::function<void(const std::string&)> log_;
  Resolver resolver_;
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
