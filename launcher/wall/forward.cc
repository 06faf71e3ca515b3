// The proxy's plain-HTTP path (docs/EGRESS.md): one checked request per connection. The head
// that goes upstream is the one plan_forward() regenerated; the body follows only through the
// framer, so the upstream never sees a byte the checks did not frame: a pipelined or smuggled
// second request stays here (read and dropped, recorded as `pipelined`), a body whose framing
// breaks midway ends both connections (`bad_framing`, a 400 when nothing was answered yet).
// The upstream's answer is relayed back until it closes. Buffers are bounded both ways.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress/decision.h"
#include "launcher/wall/proxy.h"

namespace asbx {
namespace {

constexpr std::size_t kBuffer = 64 * 1024;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What the peer takes now; false when it is gone.
bool send_some(int fd, std::string& buf, std::int64_t& moved) {
  ssize_t n = ::send(fd, buf.data(), buf.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n > 0) {
    moved += n;
    buf.erase(0, static_cast<std::size_t>(n));
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

// One read: >0 bytes, 0 at EOF (or a hard error), -1 when there is nothing yet.
ssize_t read_some(int fd, char* buf, std::size_t size) {
  ssize_t n = ::recv(fd, buf, size, MSG_DONTWAIT);
  if (n >= 0) return n;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : 0;
}

}  // namespace

struct EgressProxy::Forwarding {
  BodyFramer body;
  std::string to_up, to_agent;
  std::int64_t out = 0, in = 0;
  bool agent_eof = false, up_eof = false, pipelined = false, broken = false;

  explicit Forwarding(const ForwardPlan& plan) : body(plan.framing), to_up(plan.head) {}

  // The agent's bytes: the body's go up; anything after the body is a next request, dropped.
  void from_agent(std::string_view bytes) {
    if (body.status() == BodyFramer::Status::more) bytes.remove_prefix(body.feed(bytes, to_up));
    if (!bytes.empty() && body.status() == BodyFramer::Status::done) pipelined = true;
  }
  bool finished() const { return body.status() == BodyFramer::Status::bad || broken || (up_eof && to_agent.empty()); }
};

void EgressProxy::forward(int agent, int up, const ForwardPlan& plan, const std::string& early, const std::string& host,
                          int port, std::int64_t end) {
  Forwarding f(plan);
  f.from_agent(early);
  std::int64_t last = now_ms();
  bool limit_hit = false;
  while (!f.finished()) {
    std::int64_t now = now_ms(), until = std::min(end, last + plan_.idle_ms);
    if (now >= until) {
      limit_hit = true;
      break;
    }
    if (!step(f, agent, up, until - now, last)) break;
  }
  tally_.bytes(host, port, f.out, f.in);
  ::close(up);
  if (f.pipelined) note_refusal(host, port, refusal::pipelined, "only the first request of a connection is forwarded");
  if (f.body.status() == BodyFramer::Status::bad) {
    bool answered = f.in > 0;
    return refuse(agent, host, port, refusal::bad_framing, answered ? 0 : 400, f.body.why());
  }
  if (limit_hit) log_("egress: closed " + host + ":" + std::to_string(port) + ": " +
                      (now_ms() >= end ? "the connection's total limit passed" : "idle limit passed"));
  ::close(agent);
}

// One poll round of a forwarding; false when it must end now (stop, or the agent left
// before its request was complete).
bool EgressProxy::step(Forwarding& f, int agent, int up, std::int64_t wait_ms, std::int64_t& last) {
  pollfd p[3] = {{stop_pipe_[0], POLLIN, 0}, {agent, 0, 0}, {up, 0, 0}};
  if (!f.agent_eof && f.to_up.size() < kBuffer) p[1].events |= POLLIN;
  if (!f.to_agent.empty()) p[1].events |= POLLOUT;
  if (!f.to_up.empty()) p[2].events |= POLLOUT;
  if (!f.up_eof && f.to_agent.size() < kBuffer) p[2].events |= POLLIN;
  for (pollfd& q : p) q.fd = q.events ? q.fd : -1;  // a hang-up we wait for nothing from must not spin the loop
  int n = ::poll(p, 3, static_cast<int>(std::min<std::int64_t>(wait_ms, 60'000)));
  if (n < 0 && errno == EINTR) return true;
  if (n < 0 || p[0].revents) return false;
  char chunk[16384];
  if ((p[1].events & POLLIN) && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t r = read_some(agent, chunk, sizeof chunk);
    if (r > 0) f.from_agent(std::string_view(chunk, static_cast<std::size_t>(r))), last = now_ms();
    if (r == 0) f.agent_eof = true;
    if (r == 0 && f.body.status() == BodyFramer::Status::more) return false;  // a request cut short: never completed upstream
  }
  if ((p[2].events & POLLIN) && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t r = read_some(up, chunk, sizeof chunk);
    if (r > 0) f.to_agent.append(chunk, static_cast<std::size_t>(r)), last = now_ms();
    if (r == 0) f.up_eof = true;
  }
  if (!f.to_up.empty() && !send_some(up, f.to_up, f.out)) f.broken = true;
  if (!f.to_agent.empty() && !send_some(agent, f.to_agent, f.in)) f.broken = true;
  return true;
}

}  // namespace asbx
