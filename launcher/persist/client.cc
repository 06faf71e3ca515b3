#include "launcher/persist/client.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/output_sink.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/lifecycle/signals.h"
#include "launcher/lifecycle/terminal.h"
#include "launcher/persist/channel.h"
#include "persist/keys.h"
#include "persist/wire.h"
#include "base/util.h"

namespace asbx {
namespace {

using nlohmann::json;
constexpr std::size_t kChunk = 64 * 1024;
constexpr std::size_t kHighWater = 256 * 1024;
constexpr int kLastOutputMs = 2000;

std::string field(const std::string& payload, const char* key) {
  json j = json::parse(payload, nullptr, false);
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string hello(const char* op, int rows, int cols) {
  return encode_frame(FrameType::hello, json{{"op", op}, {"rows", rows}, {"cols", cols}}.dump());
}

[[noreturn]] void lost(const std::string& session) {
  throw Error(ErrorKind::internal, "the supervisor of session '" + session +
                                       "' went away without the session's result (agent-sandbox gc removes what it left)");
}

class Terminal {
 public:
  Terminal(UniqueFd sock, const std::string& program, const std::string& session)
      : sock_(std::move(sock)), program_(program), session_(session), out_(1) {}

  int run() {
    int rows = 0, cols = 0;
    bool tty = ::isatty(0) && window_size(0, rows, cols);
    raw_.emplace(tty, 0);
    send_ += hello("attach", rows, cols);
    for (;;)
      if (auto code = step()) return *code;
  }

 private:
  std::optional<int> step() {
    pollfd fds[4] = {{sock_.get(), 0, 0}, {signals_.fd(), POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}};
    if (out_.pending() < kHighWater) fds[0].events |= POLLIN;
    if (!send_.empty()) fds[0].events |= POLLOUT;
    if (stdin_open_ && send_.size() < kChunk) fds[2] = {0, POLLIN, 0};
    if (out_.pending() > 0) fds[3] = {out_.poll_fd(), POLLOUT, 0};
    if (::poll(fds, 4, -1) < 0 && errno != EINTR) lost(session_);
    if (fds[3].revents & POLLOUT) out_.flush(true);
    if (fds[1].revents & POLLIN)
      if (auto code = signalled()) return code;
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR))
      if (auto code = read_stdin()) return code;
    if ((fds[0].revents & POLLOUT) && !send_.empty()) send_some();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) return read_socket();
    return std::nullopt;
  }

  std::optional<int> signalled() {
    while (int sig = signals_.next()) {
      int rows = 0, cols = 0;
      if (sig != SIGWINCH) return detach("by signal " + std::to_string(sig), 128 + sig);
      if (window_size(0, rows, cols)) send_ += encode_winch(rows, cols);
    }
    return std::nullopt;
  }

  std::optional<int> read_stdin() {
    char buf[kChunk];
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return std::nullopt;
    if (n <= 0) {  // no more input (a closed pipe): keep showing the session
      stdin_open_ = false;
      return std::nullopt;
    }
    bool detach_now = false;
    std::string pass = keys_.feed(buf, static_cast<std::size_t>(n), detach_now);
    if (!pass.empty()) send_ += encode_frame(FrameType::data, pass);
    if (!detach_now) return std::nullopt;
    send_within(sock_.get(), send_, 500);
    return detach("", 0);
  }

  // A supervisor that closed its end may still have said why (a refusal): the reading side decides.
  void send_some() {
    ssize_t n = ::send(sock_.get(), send_.data(), send_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) send_.erase(0, static_cast<std::size_t>(n));
    else if (n < 0 && errno != EAGAIN && errno != EINTR) send_.clear(), stdin_open_ = false;
  }

  std::optional<int> read_socket() {
    char buf[kChunk];
    ssize_t n = ::recv(sock_.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return std::nullopt;
    if (n <= 0) lost(session_);
    in_.feed(buf, static_cast<std::size_t>(n));
    while (auto f = in_.next()) {
      if (f->type == FrameType::data) out_.push(f->payload.data(), f->payload.size());
      else if (f->type == FrameType::exit) return ended(f->payload);
      else if (f->type == FrameType::detached) return detach("", 0, "it was attached from another terminal");
      else if (f->type == FrameType::refused) throw Error(ErrorKind::attach_refused, "session '" + session_ + "': " + field(f->payload, "why"));
    }
    if (in_.bad()) lost(session_);
    return std::nullopt;
  }

  // The session ended while attached: its last output, then its lines, then its exit code.
  int ended(const std::string& payload) {
    finish_output();
    json x = json::parse(payload, nullptr, false);
    int code = x.is_object() && x.contains("exit_code") && x["exit_code"].is_number_integer() ? x["exit_code"].get<int>() : -1;
    if (code < 0) lost(session_);
    if (x.contains("lines") && x["lines"].is_array())
      for (const auto& line : x["lines"])
        if (line.is_string()) std::fprintf(stderr, "%s\n", printable(line.get<std::string>()).c_str());
    return code;
  }

  int detach(const std::string& how, int code, const std::string& why = "") {
    finish_output();
    std::fprintf(stderr, "\n%s: detached from session %s%s%s; it goes on (reattach: agent-sandbox attach %s)\n",
                 program_.c_str(), session_.c_str(), how.empty() ? "" : (" " + how).c_str(),
                 why.empty() ? "" : (": " + why).c_str(), session_.c_str());
    return code;
  }

  void finish_output() {
    std::int64_t until = steady_ms() + kLastOutputMs;
    while (out_.pending() > 0 && !out_.gone() && steady_ms() < until) {
      pollfd p{out_.poll_fd(), POLLOUT, 0};
      if (::poll(&p, 1, static_cast<int>(until - steady_ms())) > 0) out_.flush(true);
    }
    raw_.reset();  // the terminal is the caller's again before anything is printed
  }

  UniqueFd sock_;
  std::string program_, session_;
  SignalPipe signals_;
  std::optional<TerminalGuard> raw_;
  OutputSink out_;
  WireReader in_;
  DetachScanner keys_;
  std::string send_;
  bool stdin_open_ = true;
};

// One question, one answer frame, within `wait_ms`.
std::optional<Frame> ask(int fd, const std::string& question, int wait_ms) {
  send_within(fd, question, wait_ms);  // even when refused unheard, the answer may be waiting
  WireReader in;
  std::int64_t until = steady_ms() + wait_ms;
  for (;;) {
    std::optional<Frame> f = in.next();
    for (; f && f->type == FrameType::data; f = in.next()) {}
    if (f) return f;
    std::int64_t left = until - steady_ms();
    pollfd p{fd, POLLIN, 0};
    if (in.bad() || left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
    char buf[kChunk];
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return std::nullopt;
    if (n > 0) in.feed(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

int attach_terminal(UniqueFd socket, const std::string& program, const std::string& session) {
  return Terminal(std::move(socket), program, session).run();
}

int stop_session(UniqueFd socket, const std::string& session, int wait_ms) {
  std::optional<Frame> f = ask(socket.get(), hello("stop", 0, 0), wait_ms);
  if (f && f->type == FrameType::refused) throw Error(ErrorKind::attach_refused, "session '" + session + "': " + field(f->payload, "why"));
  json x = f && f->type == FrameType::exit ? json::parse(f->payload, nullptr, false) : json();
  if (!x.is_object() || !x.contains("exit_code") || !x["exit_code"].is_number_integer()) lost(session);
  return x["exit_code"].get<int>();
}

std::string query_attached(UniqueFd socket) {
  std::optional<Frame> f = ask(socket.get(), hello("query", 0, 0), 500);
  json s = f && f->type == FrameType::status ? json::parse(f->payload, nullptr, false) : json();
  if (!s.is_object() || !s.contains("attached") || !s["attached"].is_boolean()) return "";
  return s["attached"].get<bool>() ? "attached" : "detached";
}

}  // namespace asbx
