#include "launcher/pump.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/fdio.h"
#include "launcher/frames.h"

namespace asbx {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

constexpr std::size_t kChunk = 64 * 1024;
constexpr std::size_t kKeepStderr = 512;

class Pump {
 public:
  Pump(AttachStream& a, const StdioFds& io, bool tty, SignalPipe& s, PumpHooks& h)
      : attach_(a), io_(io), tty_(tty), signals_(s), hooks_(h),
        demux_([this](int stream, const char* d, std::size_t n) { deliver(stream, d, n); }) {}

  PumpResult run() {
    int flags = ::fcntl(attach_.fd(), F_GETFL);
    ::fcntl(attach_.fd(), F_SETFL, flags | O_NONBLOCK);
    std::string early = attach_.take_leftover();
    if (!early.empty()) from_container(early.data(), early.size());
    while (!container_eof_) step();
    result_.stream_truncated = !tty_ && demux_.mid_frame();
    return result_;
  }

 private:
  void step() {
    // fds[3]: our stdout, watched for errors only: under ssh without a pty, a dropped
    // connection shows up as the reader of our stdout going away; treated as SIGHUP.
    pollfd fds[4] = {{attach_.fd(), POLLIN, 0}, {signals_.fd(), POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}};
    if (!pending_in_.empty()) fds[0].events |= POLLOUT;
    if (stdin_open_ && pending_in_.empty()) fds[2] = {io_.in, POLLIN, 0};
    if (!output_gone_) fds[3] = {io_.out, 0, 0};
    int n = ::poll(fds, 4, poll_timeout());
    if (n < 0 && errno != EINTR) container_eof_ = true;
    if (n <= 0) return check_deadline();
    if (fds[1].revents & POLLIN) drain_signals();
    if (fds[3].revents & (POLLERR | POLLHUP)) output_gone();
    if (fds[2].revents & POLLNVAL) stdin_open_ = false, attach_.close_stdin();
    else if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) read_stdin();
    if (fds[0].revents & POLLOUT) flush_stdin();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) read_container();
    check_deadline();
  }

  void output_gone() {
    output_gone_ = true;
    if (hooks_.on_signal) hooks_.on_signal(SIGHUP);
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

  void read_container() {
    char buf[kChunk];
    for (;;) {
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
      write_all(io_.out, data, size);
    else
      demux_.feed(data, size);
  }

  void deliver(int stream, const char* data, std::size_t size) {
    if (stream == 1) {
      write_all(io_.out, data, size);
      return;
    }
    if (result_.first_stderr.size() < kKeepStderr)
      result_.first_stderr.append(data, std::min(size, kKeepStderr - result_.first_stderr.size()));
    write_all(io_.err, data, size);
  }

  AttachStream& attach_;
  StdioFds io_;
  bool tty_;
  SignalPipe& signals_;
  PumpHooks& hooks_;
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
