#include "launcher/persist/server.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/lifecycle/pump.h"
#include "launcher/persist/channel.h"

namespace asbx {
namespace {

constexpr std::size_t kChunk = 64 * 1024;
constexpr std::size_t kMaxInput = 64 * 1024;  // input not yet taken by the pty: then the client waits
constexpr int kHelloMs = 1000;
constexpr int kStopAgainMs = 2000;

using nlohmann::json;

std::string why_frame(FrameType type, const std::string& why) { return encode_frame(type, json{{"why", why}}.dump()); }

// The first frame of a new connection, waited for at most kHelloMs (a client sends it at once).
std::optional<Frame> read_hello(int fd, WireReader& in) {
  std::int64_t until = steady_ms() + kHelloMs;
  for (;;) {
    if (auto f = in.next()) return f;
    std::int64_t left = until - steady_ms();
    pollfd p{fd, POLLIN, 0};
    if (in.bad() || left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) return std::nullopt;
    if (n > 0) in.feed(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

AttachServer::AttachServer(UniqueFd listener, int master, unsigned owner_uid)
    : listener_(std::move(listener)), master_(master), owner_(owner_uid) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) wake_read_ = UniqueFd(p[0]), wake_write_ = UniqueFd(p[1]);
}

AttachServer::~AttachServer() {
  if (thread_.joinable()) {
    finish(-1, {});
  }
}

void AttachServer::start() { thread_ = std::thread([this] { loop(); }); }

void AttachServer::finish(int exit_code, const std::vector<std::string>& lines) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    exit_frame_ = encode_frame(FrameType::exit, json{{"exit_code", exit_code}, {"lines", lines}}.dump());
  }
  finishing_ = true;
  char b = 1;
  (void)!::write(wake_write_.get(), &b, 1);
  if (thread_.joinable()) thread_.join();
}

void AttachServer::loop() {
  while (!finishing_) step();
  last_frames();
}

void AttachServer::step() {
  std::vector<pollfd> fds = {{wake_read_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}};
  if (master_open_) fds[2] = {master_, static_cast<short>(POLLIN | (to_master_.empty() ? 0 : POLLOUT)), 0};
  if (client_) {
    short ev = to_master_.size() < kMaxInput ? POLLIN : 0;
    fds[3] = {client_->fd.get(), static_cast<short>(ev | (client_->out.empty() ? 0 : POLLOUT)), 0};
  }
  for (auto& w : waiters_) fds.push_back({w.fd.get(), static_cast<short>(POLLIN | (w.out.empty() ? 0 : POLLOUT)), 0});
  int timeout = stop_again_at_ < 0 ? -1 : static_cast<int>(std::max<std::int64_t>(0, stop_again_at_ - steady_ms()));
  if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
  if (stop_again_at_ >= 0 && steady_ms() >= stop_again_at_) request_stop();
  if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) read_master();
  if (fds[2].revents & POLLOUT) write_master();
  if (client_ && (fds[3].revents & POLLOUT) && !flush(*client_)) client_.reset();
  if (client_ && (fds[3].revents & (POLLIN | POLLHUP | POLLERR))) read_client();
  for (std::size_t i = 0; i < waiters_.size(); ++i) {  // a stop that went away: the stop goes on
    char b;
    if ((fds[4 + i].revents & (POLLIN | POLLHUP | POLLERR)) && ::recv(waiters_[i].fd.get(), &b, 1, MSG_DONTWAIT) == 0)
      waiters_[i].fd = UniqueFd();
  }
  std::erase_if(waiters_, [](const Peer& w) { return !w.fd; });
  if (fds[1].revents & POLLIN) accept_all();
}

void AttachServer::accept_all() {
  for (;;) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    welcome(UniqueFd(fd));
  }
}

// Who is calling decides first: only the session's owner (or root) is read at all.
void AttachServer::welcome(UniqueFd fd) {
  long uid = peer_uid(fd.get());
  if (uid < 0 || !may_attach(static_cast<unsigned>(uid), owner_)) {
    send_within(fd.get(), why_frame(FrameType::refused, "uid " + std::to_string(uid) + " may not attach: the session "
                                    "belongs to uid " + std::to_string(owner_) + " (only that user, or root, may attach)"),
                100);
    return;
  }
  Peer peer{std::move(fd), {}, {}, 0, 0};
  if (auto first = read_hello(peer.fd.get(), peer.in)) hello(std::move(peer), *first);
}

void AttachServer::hello(Peer peer, const Frame& frame) {
  json h = frame.type == FrameType::hello ? json::parse(frame.payload, nullptr, false) : json();
  std::string op = h.is_object() && h.contains("op") && h["op"].is_string() ? h["op"].get<std::string>() : "";
  if (op == "query") {
    send_within(peer.fd.get(), encode_frame(FrameType::status, json{{"attached", client_.has_value()}, {"pid", ::getpid()}}.dump()), 100);
  } else if (op == "stop") {
    waiters_.push_back(std::move(peer));
    request_stop();
  } else if (op == "attach") {
    auto dim = [&h](const char* k) { return h.contains(k) && h[k].is_number_integer() ? h[k].get<int>() : 0; };
    take_over(std::move(peer), dim("rows"), dim("cols"));
  }
}

// The new terminal gets the current screen; its size becomes the session's (the agent redraws).
void AttachServer::take_over(Peer peer, int rows, int cols) {
  if (client_) {
    queue(*client_, why_frame(FrameType::detached, "attached from another terminal"));
    flush(*client_);  // best effort: it may be gone already
  }
  client_ = std::move(peer);
  std::string screen = screen_.replay();
  if (!screen.empty()) queue(*client_, encode_frame(FrameType::data, screen));
  if (rows > 0 && rows < 65536 && cols > 0 && cols < 65536) {
    set_window(master_, rows, cols);
    ::kill(::getpid(), SIGWINCH);  // the session's resize path: podman's resize of the container's tty
  }
  while (auto f = client_->in.next()) from_client(*f);
}

void AttachServer::read_master() {
  char buf[kChunk];
  for (;;) {
    ssize_t n = ::read(master_, buf, sizeof buf);
    if (n > 0) {
      output(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && errno != EAGAIN)) master_open_ = false;  // EIO: the session closed its side
    return;
  }
}

void AttachServer::output(const char* data, std::size_t size) {
  screen_.append(data, size);
  if (!client_) return;
  if (client_->queued + size > kMaxClientQueue) {  // a terminal that does not keep up gets the screen, not a backlog
    std::string front = client_->sent > 0 ? client_->out.front() : "";
    client_->out.clear();
    client_->queued = 0;
    if (!front.empty()) queue(*client_, front);
    queue(*client_, encode_frame(FrameType::data, screen_.replay()));
  } else {
    queue(*client_, encode_frame(FrameType::data, std::string_view(data, size)));
  }
  if (!flush(*client_)) client_.reset();
}

void AttachServer::write_master() {
  while (!to_master_.empty()) {
    ssize_t n = ::write(master_, to_master_.data(), to_master_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    to_master_.erase(0, static_cast<std::size_t>(n));
  }
}

void AttachServer::read_client() {
  char buf[kChunk];
  ssize_t n = ::recv(client_->fd.get(), buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) return client_.reset();  // the terminal went away: the session is detached
  client_->in.feed(buf, static_cast<std::size_t>(n));
  while (client_) {
    auto f = client_->in.next();
    if (!f) break;
    from_client(*f);
  }
  if (client_ && client_->in.bad()) client_.reset();
}

void AttachServer::from_client(const Frame& f) {
  if (f.type == FrameType::data) {
    to_master_ += f.payload;
    write_master();
  } else if (f.type == FrameType::winch) {
    if (auto size = decode_winch(f.payload)) {
      set_window(master_, size->first, size->second);
      ::kill(::getpid(), SIGWINCH);
    }
  }
}

void AttachServer::queue(Peer& p, std::string frame) {
  p.queued += frame.size();
  p.out.push_back(std::move(frame));
}

// Sends what the socket takes now; false when the peer is gone.
bool AttachServer::flush(Peer& p) {
  while (!p.out.empty()) {
    const std::string& front = p.out.front();
    ssize_t n = ::send(p.fd.get(), front.data() + p.sent, front.size() - p.sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    if (n <= 0) return false;
    p.sent += static_cast<std::size_t>(n);
    if (p.sent < front.size()) continue;
    p.queued -= front.size();
    p.sent = 0;
    p.out.pop_front();
  }
  return true;
}

// The session's own signal path ends it (forward, grace, kill, record). Asked again now and then:
// a stop that came before the session installed its handlers is not lost.
void AttachServer::request_stop() {
  ::kill(::getpid(), SIGTERM);
  stop_again_at_ = steady_ms() + kStopAgainMs;
}

void AttachServer::last_frames() {
  if (master_open_) read_master();  // the agent's last output
  accept_all();                     // a terminal that connected as the session ended still hears it
  std::string exit_frame;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    exit_frame = exit_frame_;
  }
  std::vector<Peer*> peers;
  if (client_) peers.push_back(&*client_);
  for (auto& w : waiters_) peers.push_back(&w);
  std::int64_t until = steady_ms() + kFinishMs;
  for (Peer* p : peers) {
    std::string rest;
    for (std::size_t i = 0; i < p->out.size(); ++i) rest += i == 0 ? p->out[i].substr(p->sent) : p->out[i];
    send_within(p->fd.get(), rest + exit_frame, static_cast<int>(std::max<std::int64_t>(0, until - steady_ms())));
  }
  client_.reset();
  waiters_.clear();
}

}  // namespace asbx
