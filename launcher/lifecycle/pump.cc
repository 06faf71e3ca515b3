#include "launcher/lifecycle/pump.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <memory>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/podman/frames.h"
#include "launcher/lifecycle/output_sink.h"

namespace asbx {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

constexpr std::size_t kChunk = 64 * 1024;
constexpr std::size_t kHighWater = 256 * 1024;  // per destination, then the container waits

class Pump {
 public:
  Pump(AttachStream& a, const StdioFds& io, bool tty, SignalPipe& s, PumpHooks& h)
      : attach_(a), io_(io), tty_(tty), signals_(s), hooks_(h), out_(io.out),
        err_(io.err == io.out ? nullptr : std::make_unique<OutputSink>(io.err)),
        demux_([this](int stream, const char* d, std::size_t n) { deliver(stream, d, n); }) {}

  PumpResult run() {
    int flags = ::fcntl(attach_.fd(), F_GETFL);
    ::fcntl(attach_.fd(), F_SETFL, flags | O_NONBLOCK);
    std::string early = attach_.take_leftover();
    if (!early.empty()) from_container(early.data(), early.size());
    while (!container_eof_) step();
    drain();
    result_.stream_truncated = !tty_ && demux_.mid_frame();
    return result_;
  }

 private:
  OutputSink& err_sink() { return err_ ? *err_ : out_; }
  bool full(OutputSink& s) { return s.pending() >= kHighWater; }
  // While the session is being killed the container's output is read on and what does not
  // fit is dropped: conmon, blocked writing to us, could otherwise never report the exit.
  bool ending() const { return hooks_.ending && hooks_.ending(); }
  bool backed_up() {
    if (ending()) return false;
    return full(out_) || full(err_sink());
  }

  // fds: attach, signals, stdin, our stdout, our stderr. Our stdout is watched even with
  // nothing to write: under ssh without a pty a dropped connection shows up as its
  // reader going away, treated as SIGHUP.
  void step() {
    pollfd fds[5] = {{attach_.fd(), 0, 0}, {signals_.fd(), POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}};
    if (!backed_up()) fds[0].events |= POLLIN;
    if (!pending_in_.empty()) fds[0].events |= POLLOUT;
    if (stdin_open_ && pending_in_.empty()) fds[2] = {io_.in, POLLIN, 0};
    watch_outputs(fds + 3);
    int n = ::poll(fds, 5, poll_timeout());
    if (n < 0 && errno != EINTR) container_eof_ = true;
    if (n <= 0) return check_deadline();
    if (fds[1].revents & POLLIN) drain_signals();
    outputs_ready(fds + 3);
    if (fds[2].revents & POLLNVAL) stdin_open_ = false, attach_.close_stdin();
    else if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) read_stdin();
    if (fds[0].revents & POLLOUT) flush_stdin();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) read_container();
    check_deadline();
  }

  void watch_outputs(pollfd* fds) {
    if (!out_.gone()) fds[0] = {out_.poll_fd(), static_cast<short>(out_.pending() ? POLLOUT : 0), 0};
    if (err_ && !err_->gone() && err_->pending()) fds[1] = {err_->poll_fd(), POLLOUT, 0};
  }

  void outputs_ready(const pollfd* fds) {
    if (fds[0].revents & (POLLERR | POLLHUP)) out_.mark_gone();
    else if (fds[0].revents & POLLOUT) out_.flush(true);
    if (err_ && (fds[1].revents & (POLLERR | POLLHUP))) err_->mark_gone();
    else if (err_ && (fds[1].revents & POLLOUT)) err_->flush(true);
    if (out_.gone() && !output_gone_) {
      output_gone_ = true;
      if (hooks_.on_signal) hooks_.on_signal(SIGHUP);
    }
  }

  // The container has stopped; what is queued still goes to the caller, unless the
  // session's deadline passes or a signal arrives first: then it is dropped and counted.
  void drain() {
    while (out_.pending() + (err_ ? err_->pending() : 0) > 0 && !out_.gone()) {
      pollfd fds[3] = {{signals_.fd(), POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}};
      watch_outputs(fds + 1);
      if (hooks_.keep_draining && !hooks_.keep_draining()) break;
      int n = ::poll(fds, 3, poll_timeout());
      if (n > 0 && (fds[0].revents & POLLIN)) break;
      if (n > 0) outputs_ready(fds + 1);
    }
    result_.output_dropped += out_.drop() + (err_ ? err_->drop() : 0);
  }

  int poll_timeout() const {
    std::int64_t d = hooks_.deadline ? hooks_.deadline() : -1;
    if (d < 0) return -1;
    std::int64_t left = d - steady_ms();
    return left < 0 ? 0 : static_cast<int>(std::min<std::int64_t>(left, 60'000));
  }

  void check_deadline() {
    std::int64_t d = hooks_.deadline ? hooks_.deadline() : -1;
    if (d >= 0 && steady_ms() >= d && hooks_.on_deadline) hooks_.on_deadline();
  }

  void drain_signals() {
    while (int sig = signals_.next()) {
      if (sig == SIGWINCH) {
        if (hooks_.on_winch) hooks_.on_winch();
      } else if (hooks_.on_signal) {
        hooks_.on_signal(sig);
      }
    }
  }

  void read_stdin() {
    char buf[kChunk];
    ssize_t n = ::read(io_.in, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      stdin_open_ = false;
      if (!tty_) attach_.close_stdin();  // with a tty, EOF is the terminal's business
      return;
    }
    pending_in_.assign(buf, static_cast<std::size_t>(n));
    flush_stdin();
  }

  void flush_stdin() {
    while (!pending_in_.empty()) {
      ssize_t n = ::send(attach_.fd(), pending_in_.data(), pending_in_.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n < 0) {  // the container no longer reads: drop further input
        pending_in_.clear();
        stdin_open_ = false;
        return;
      }
      pending_in_.erase(0, static_cast<std::size_t>(n));
    }
  }

  // Reads until the socket is empty or our queues are full (then poll waits for the caller).
  void read_container() {
    char buf[kChunk];
    while (!backed_up()) {
      ssize_t n = ::read(attach_.fd(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) {
        container_eof_ = true;
        return;
      }
      from_container(buf, static_cast<std::size_t>(n));
    }
  }

  void from_container(const char* data, std::size_t size) {
    if (tty_)
      deliver(1, data, size);
    else
      demux_.feed(data, size);
  }

  void deliver(int stream, const char* data, std::size_t size) {
    if (io_.out_max >= 0) size = within_bound(size);
    OutputSink& sink = stream == 1 ? out_ : err_sink();
    if (hooks_.on_output) hooks_.on_output(stream, std::string_view(data, size));
    if (sink.gone() || (ending() && full(sink)))
      result_.output_dropped += static_cast<std::int64_t>(size);
    else
      sink.push(data, size);
  }

  // The capture log's bound (StdioFds::out_max): what comes past it is counted, not kept.
  std::size_t within_bound(std::size_t size) {
    std::int64_t room = std::max<std::int64_t>(0, io_.out_max - bounded_);
    std::size_t take = std::min<std::size_t>(size, static_cast<std::size_t>(room));
    bounded_ += static_cast<std::int64_t>(take);
    result_.output_truncated += static_cast<std::int64_t>(size - take);
    return take;
  }

  AttachStream& attach_;
  StdioFds io_;
  std::int64_t bounded_ = 0;
  bool tty_;
  SignalPipe& signals_;
  PumpHooks& hooks_;
  OutputSink out_;
  std::unique_ptr<OutputSink> err_;  // null when stdout and stderr are one fd (the capture log)
  FrameDemuxer demux_;
  PumpResult result_;
  std::string pending_in_;
  bool stdin_open_ = true;
  bool container_eof_ = false;
  bool output_gone_ = false;
};

}  // namespace

PumpResult pump_stdio(AttachStream& attach, const StdioFds& io, bool tty, SignalPipe& signals, PumpHooks& hooks) {
  return Pump(attach, io, tty, signals, hooks).run();
}

}  // namespace asbx
