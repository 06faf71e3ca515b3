#include "launcher/wall/proxy.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress/decision.h"
#include "egress/sni.h"
#include "launcher/wall/net_io.h"

namespace asbx {
namespace {

constexpr std::int64_t kHelloMs = 10'000;
constexpr std::size_t kRelayBuffer = 64 * 1024;

}  // namespace

std::string refusal_answer(int status, const std::string& host, int port, const std::string& reason) {
  std::string body = "agent-sandbox egress: " + printable_host(host) + ":" + std::to_string(port) + " refused: " + reason + "\n";
  const char* text = status == 400   ? "Bad Request"
                     : status == 413 ? "Content Too Large"
                     : status == 426 ? "Upgrade Required"
                     : status == 501 ? "Not Implemented"
                     : status == 502 ? "Bad Gateway"
                                     : "Forbidden";
  return "HTTP/1.1 " + std::to_string(status) + " " + text + "\r\nContent-Type: text/plain\r\nX-Proxy-Error: " + reason +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

namespace {

// One direction's bytes in flight.
struct Pipe {
  int from, to;
  std::string buf;
  bool eof = false;
  bool shut = false;
  std::int64_t moved = 0;
};

// Polls both ends for what the pipes can take or give; false on stop or a poll error.
bool wait_round(const Pipe& out, const Pipe& in, int agent, int up, std::int64_t wait_ms, int stop_fd) {
  pollfd p[3] = {{stop_fd, POLLIN, 0}, {agent, 0, 0}, {up, 0, 0}};
  for (const Pipe* d : {&out, &in}) {
    pollfd& src = d->from == agent ? p[1] : p[2];
    pollfd& dst = d->to == agent ? p[1] : p[2];
    if (!d->eof && d->buf.size() < kRelayBuffer) src.events |= POLLIN;
    if (!d->buf.empty()) dst.events |= POLLOUT;
  }
  int n = ::poll(p, 3, clamp_ms(wait_ms));
  if (n < 0 && errno == EINTR) return true;
  return n >= 0 && !p[0].revents;
}

// One read (room permitting) and one write of a direction; false when its receiver is gone.
bool move(Pipe& d, std::int64_t& last) {
  char chunk[16384];
  if (!d.eof && d.buf.size() < kRelayBuffer) {
    ssize_t r = ::recv(d.from, chunk, sizeof chunk, MSG_DONTWAIT);
    if (r > 0) d.buf.append(chunk, static_cast<std::size_t>(r)), last = now_ms();
    else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) d.eof = true;
  }
  if (!d.buf.empty()) {
    ssize_t w = ::send(d.to, d.buf.data(), d.buf.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) d.moved += w, d.buf.erase(0, static_cast<std::size_t>(w)), last = now_ms();
    else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
  }
  if (d.eof && d.buf.empty() && !d.shut) {
    ::shutdown(d.to, SHUT_WR);
    d.shut = true;
  }
  return true;
}

}  // namespace

std::vector<IpAddress> resolve_on_seat(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::vector<IpAddress> out;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return out;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    IpAddress a;
    if (ai->ai_family == AF_INET) {
      std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, 4);
    } else if (ai->ai_family == AF_INET6) {
      a.v6 = true;
      std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, 16);
    } else {
      continue;
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  ::freeaddrinfo(res);
  return out;
}

EgressProxy::EgressProxy(int listen_fd, EgressPlan plan, std::function<void(const std::string&)> log, Resolver resolver,
                         InjectParts inject)
    : listen_fd_(listen_fd), plan_(std::move(plan)), log_(std::move(log)), resolver_(std::move(resolver)),
      inject_(std::move(inject)) {
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  ::fcntl(listen_fd_, F_SETFL, ::fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
  acceptor_ = std::thread([this] { accept_loop(); });
}

EgressProxy::~EgressProxy() { stop(); }

void EgressProxy::stop() {
  if (stopped_) return;
  stopped_ = true;
  (void)!::write(stop_pipe_[1], "x", 1);
  if (acceptor_.joinable()) acceptor_.join();
  for (auto& w : workers_) w.thread.join();
  workers_.clear();
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

void EgressProxy::reap_finished() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (!it->done->load()) {
      ++it;
      continue;
    }
    it->thread.join();
    it = workers_.erase(it);
  }
}

void EgressProxy::accept_loop() {
  while (true) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) continue;
    no_delay(fd);
    reap_finished();
    if (active_.load() >= plan_.max_connections) {  // answered and closed without waiting on the agent
      note_refusal("(unknown)", 0, refusal::connection_limit);
      close_at_once(fd, refusal_answer(403, "(unknown)", 0, refusal::connection_limit));
      continue;
    }
    active_++;
    auto done = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back({std::thread([this, fd, done] {
                          serve(fd);
                          active_--;
                          done->store(true);
                        }),
                        done});
  }
}

void EgressProxy::note_refusal(const std::string& host, int port, const std::string& reason, const std::string& detail) {
  tally_.refused(host, port, reason);
  log_("egress: refused " + printable_host(host) + ":" + std::to_string(port) + ": " + reason +
       (detail.empty() ? "" : " (" + detail + ")"));
}

void EgressProxy::refuse(int fd, const std::string& host, int port, const std::string& reason, int status,
                         const std::string& detail) {
  note_refusal(host, port, reason, detail);
  if (status <= 0) return (void)::close(fd);
  send_all(fd, refusal_answer(status, host, port, reason), stop_pipe_[0], now_ms() + 2'000);
  close_lingering(fd, stop_pipe_[0]);
}

// The steps of one agent connection: its request head, the decision, the upstream, then one of
// the three ways through: plain HTTP forwarded, TLS terminated (inject mode), or a blind tunnel.
void EgressProxy::serve(int fd) {
  Conn c;
  c.fd = fd;
  c.end = now_ms() + plan_.total_ms;
  if (!read_head(c)) return (void)::close(fd);  // gone, stopped, or timed out (on record)
  if (!decide(c)) return;
  if (c.rule && c.rule->refresh) return establish(c, -1) ? intercept(c, -1) : void();
  int up = open_upstream(c);
  if (up < 0) return;
  if (c.dest.plain_http) {
    tally_.connection(c.host, c.dest.port);
    return forward(fd, up, c.forwarding, c.first, c.host, c.dest.port, c.end);
  }
  if (!establish(c, up)) return;
  if (c.rule) return intercept(c, up);
  if (!check_hello(c, up)) return;
  tally_.connection(c.host, c.dest.port);
  relay(fd, up, c.first, c.host, c.dest.port, c.end);
}

// The whole head within kHeadMs of accept (egress/decision.h); a silent connection past it is
// closed on record, so that 64 of them hold the slots for seconds, not for the idle limit.
bool EgressProxy::read_head(Conn& c) {
  std::int64_t until = std::min({c.end, now_ms() + plan_.idle_ms, now_ms() + kHeadMs});
  while (c.head.status == RequestHead::Status::incomplete) {
    if (read_more(c.fd, c.buf, stop_pipe_[0], until)) {
      c.head = parse_request_head(c.buf);
      continue;
    }
    if (now_ms() >= until) note_refusal("(unknown)", 0, refusal::head_timeout, "no request head within " +
                                                                                std::to_string(kHeadMs / 1000) + " s");
    return false;
  }
  return true;
}

// The name against the list, the plain-HTTP checks; the inject rule of a CONNECT host. The
// host is normalised first (case, trailing dot): "ChatGPT.com." is chatgpt.com everywhere.
bool EgressProxy::decide(Conn& c) {
  c.dest = destination_of(c.head);
  c.host = c.dest.ok ? normal_host_name(c.dest.host) : "";
  if (c.host.empty()) c.host = c.dest.ok ? c.dest.host : "(malformed)";
  std::string malformed = c.head.status == RequestHead::Status::bad ? c.head.why : c.dest.why;
  if (auto why = decide_name(plan_, c.dest)) {
    refuse(c.fd, c.host, c.dest.port, *why, *why == refusal::bad_request ? 400 : 403, c.dest.ok ? "" : malformed);
    return false;
  }
  if (c.dest.plain_http) c.forwarding = plan_forward(c.head, c.dest);
  if (c.forwarding.refusal) {
    refuse(c.fd, c.host, c.dest.port, *c.forwarding.refusal, c.forwarding.status, c.forwarding.why);
    return false;
  }
  c.first = c.buf.substr(c.head.length);
  if (!c.dest.plain_http && c.dest.port == 443 && inject_.ca) c.rule = inject_rule(plan_, c.host);
  return true;
}

// Resolved on the seat (or the seat's static name), every address checked, the first that answers.
int EgressProxy::open_upstream(Conn& c) {
  std::vector<IpAddress> addresses;
  if (auto fixed = static_address(plan_, c.host)) addresses = {*fixed};
  else addresses = resolver_(c.host);
  if (auto why = check_addresses(plan_, addresses)) return refuse(c.fd, c.host, c.dest.port, *why), -1;
  int up = connect_any(addresses, c.dest.port, stop_pipe_[0]);
  if (up < 0) refuse(c.fd, c.host, c.dest.port, refusal::unreachable, 502);
  return up;
}

bool EgressProxy::establish(Conn& c, int up) {
  if (send_all(c.fd, "HTTP/1.1 200 Connection Established\r\n\r\n", stop_pipe_[0], c.end)) return true;
  ::close(c.fd);
  if (up >= 0) ::close(up);
  return false;
}

// A blind tunnel's ClientHello must name the CONNECT host.
bool EgressProxy::check_hello(Conn& c, int up) {
  SniResult sni = client_hello_sni(c.first);
  std::int64_t hello_until = std::min(c.end, now_ms() + kHelloMs);
  while (sni.status == SniResult::Status::incomplete && read_more(c.fd, c.first, stop_pipe_[0], hello_until))
    sni = client_hello_sni(c.first);
  std::optional<std::string> why;
  if (sni.status == SniResult::Status::ok) why = check_sni(c.host, sni.name);
  else if (sni.status != SniResult::Status::incomplete) why = refusal::sni_missing;
  if (sni.status != SniResult::Status::incomplete && !why) return true;
  ::close(up);
  ::close(c.fd);
  if (!why) return false;
  std::string said = sni.status == SniResult::Status::ok ? " (TLS name " + printable_host(sni.name) + ")" : "";
  tally_.refused(c.host, c.dest.port, *why);
  log_("egress: refused " + c.host + ":" + std::to_string(c.dest.port) + ": " + *why + said);
  return false;
}

// The blind tunnel: bytes both ways until both ends are done, the idle or total limit passes,
// or stop(); then the tally.
void EgressProxy::relay(int agent, int up, const std::string& first, const std::string& host, int port, std::int64_t end) {
  Pipe out{agent, up, first}, in{up, agent};
  std::int64_t last = now_ms();
  bool limit_hit = false;
  while (!(out.eof && out.buf.empty() && in.eof && in.buf.empty())) {
    std::int64_t now = now_ms(), until = std::min(end, last + plan_.idle_ms);
    if ((limit_hit = now >= until)) break;
    if (!wait_round(out, in, agent, up, until - now, stop_pipe_[0])) break;
    if (!move(out, last) || !move(in, last)) break;
  }
  tally_.bytes(host, port, out.moved, in.moved);
  if (limit_hit)
    log_("egress: closed " + host + ":" + std::to_string(port) + ": " +
         (now_ms() >= end ? "the connection's total limit passed" : "idle limit passed"));
  ::close(agent);
  ::close(up);
}

}  // namespace asbx
