#include "launcher/remote/ssh_exec.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <libssh/libssh.h>
#include <memory>
#include <poll.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"
#include "launcher/lifecycle/output_sink.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/lifecycle/slots.h"
#include "launcher/lifecycle/terminal.h"

namespace asbx {
namespace {

constexpr std::size_t kChunk = 32 * 1024;
constexpr std::size_t kMaxHeld = 64 * 1024;
constexpr std::size_t kHighWater = 256 * 1024;  // per destination; then the channel's window closes on the seat

class ExecPump {
 public:
  ExecPump(SshConnection& c, bool tty, const StdioFds& io, SignalPipe& s, bool gated)
      : conn_(c), session_(c.raw()), tty_(tty), io_(io), signals_(s), out_(io.out),
        err_(io.err == io.out ? nullptr : std::make_unique<OutputSink>(io.err)) {
    result_.claimed = !gated;
  }
  ~ExecPump() {
    if (ch_) ssh_channel_free(ch_);
  }

  RemoteExit run(const std::string& command) {
    open(command);
    last_keepalive_ = steady_ms();
    while (!done_) step();
    drain_outputs();
    if (!result_.dropped && result_.caller_signal == 0) result_.exit_status = ssh_channel_get_exit_status(ch_);
    return result_;
  }

 private:
  void open(const std::string& command) {
    ch_ = ssh_channel_new(session_);
    if (!ch_ || ssh_channel_open_session(ch_) != SSH_OK) conn_.fail("cannot open a session channel");
    if (tty_) request_pty();
    if (ssh_channel_request_exec(ch_, command.c_str()) != SSH_OK) conn_.fail("cannot run sandbox-run");
  }

  void request_pty() {
    int rows = 24, cols = 80;
    window_size(io_.in, rows, cols);
    const char* term = std::getenv("TERM");
    if (ssh_channel_request_pty_size(ch_, term && *term ? term : "xterm", cols, rows) != SSH_OK)
      conn_.fail("the seat refused a pty");
  }

  // While the caller does not take our output the channel is not read: its window closes and
  // the seat's sandbox-run, then the agent, wait (the back-pressure reaches the writer; nothing
  // piles up here). Signals and keepalives go on meanwhile: no write to the caller ever blocks.
  void step() {
    drain();
    if (done_) return;
    pollfd fds[5] = {{ssh_get_fd(session_), POLLIN, 0}, {signals_.fd(), POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}};
    if (backed_up()) fds[0].fd = -1;
    if (stdin_open_ && (result_.claimed || gave_up_) && pending_.empty()) fds[2] = {io_.in, POLLIN, 0};
    watch_outputs(fds + 3);
    int n = ::poll(fds, 5, 1000);
    if (n < 0 && errno != EINTR) return drop("poll failed");
    if (fds[1].revents & POLLIN) drain_signals();
    outputs_ready(fds + 3);
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) read_stdin();
    flush_stdin();
    keepalive();
  }

  OutputSink& err_sink() { return err_ ? *err_ : out_; }
  bool backed_up() { return out_.pending() >= kHighWater || err_sink().pending() >= kHighWater; }

  void watch_outputs(pollfd* fds) {
    if (!out_.gone() && out_.pending()) fds[0] = {out_.poll_fd(), POLLOUT, 0};
    if (err_ && !err_->gone() && err_->pending()) fds[1] = {err_->poll_fd(), POLLOUT, 0};
  }

  void outputs_ready(const pollfd* fds) {
    if (fds[0].revents & (POLLERR | POLLHUP)) out_.mark_gone();
    else if (fds[0].revents & POLLOUT) out_.flush(true);
    if (err_ && (fds[1].revents & (POLLERR | POLLHUP))) err_->mark_gone();
    else if (err_ && (fds[1].revents & POLLOUT)) err_->flush(true);
  }

  // The seat's session has ended: what is queued still goes to the caller, unless a signal
  // comes first (then it is dropped).
  void drain_outputs() {
    while (out_.pending() + (err_ ? err_->pending() : 0) > 0 && !(out_.gone() && (!err_ || err_->gone()))) {
      pollfd fds[3] = {{signals_.fd(), POLLIN, 0}, {-1, 0, 0}, {-1, 0, 0}};
      watch_outputs(fds + 1);
      int n = ::poll(fds, 3, 1000);
      if (n > 0 && (fds[0].revents & POLLIN)) break;
      if (n > 0) outputs_ready(fds + 1);
    }
    out_.drop();
    if (err_) err_->drop();
  }

  // Everything libssh has buffered, from both streams, until nothing is left or the caller's
  // queues are full.
  void drain() {
    char buf[kChunk];
    for (bool more = true; more && !done_ && !backed_up();) {
      more = false;
      for (int is_err = 0; is_err < 2 && !done_; ++is_err) {
        int n = ssh_channel_read_nonblocking(ch_, buf, sizeof buf, is_err);
        if (n > 0) more = true, deliver(is_err, buf, static_cast<std::size_t>(n));
        else if (n == SSH_ERROR) drop(ssh_get_error(session_));
      }
    }
    if (!done_ && ssh_channel_is_eof(ch_)) done_ = true;
  }

  // Before the claim line, the stream that carries it is held back: a full seat's refusal
  // is dropped when the next seat is tried, anything else is shown at the end.
  void deliver(int is_err, const char* data, std::size_t size) {
    bool claim_stream = tty_ ? !is_err : is_err;
    if (claim_stream && !result_.claimed && !gave_up_) return hold(data, size);
    (is_err ? err_sink() : out_).push(data, size);
  }

  void hold(const char* data, std::size_t size) {
    result_.held.append(data, size);
    std::string line = std::string(kSlotClaimedLine);
    for (const char* ending : {"\n", "\r\n"}) {
      if (result_.held.rfind(line + ending, 0) == 0) {
        result_.claimed = true;
        std::string rest = result_.held.substr(line.size() + std::string(ending).size());
        result_.held.clear();
        if (!rest.empty()) (tty_ ? out_ : err_sink()).push(rest.data(), rest.size());
        return;
      }
    }
    if (result_.held.size() <= kMaxHeld) return;
    gave_up_ = true;  // no claim line (an older sandbox-run?): show what came, let stdin flow
    (tty_ ? out_ : err_sink()).push(result_.held.data(), result_.held.size());
    result_.held.clear();
  }

  void read_stdin() {
    char buf[kChunk];
    ssize_t n = ::read(io_.in, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n > 0) {
      pending_.assign(buf, static_cast<std::size_t>(n));
      return;
    }
    stdin_open_ = false;
    if (!tty_) ssh_channel_send_eof(ch_);  // with a tty, EOF is the terminal's business
  }

  // Never more than the channel's window, so a write cannot block on a slow reader.
  void flush_stdin() {
    while (!pending_.empty()) {
      std::uint32_t window = ssh_channel_window_size(ch_);
      if (window == 0) return;
      std::size_t len = std::min<std::size_t>(pending_.size(), window);
      int n = ssh_channel_write(ch_, pending_.data(), static_cast<std::uint32_t>(len));
      if (n == SSH_ERROR) return drop(ssh_get_error(session_));
      pending_.erase(0, static_cast<std::size_t>(n));
    }
  }

  void drain_signals() {
    while (int sig = signals_.next()) {
      if (sig == SIGWINCH) {
        int rows = 0, cols = 0;
        if (tty_ && window_size(io_.in, rows, cols)) ssh_channel_change_pty_size(ch_, cols, rows);
        continue;
      }
      // Closing the channel is what the seat notices (EOF/SIGHUP): it kills and removes the container.
      result_.caller_signal = sig;
      ssh_channel_close(ch_);
      done_ = true;
      return;
    }
  }

  void keepalive() {
    if (done_ || conn_.options().keepalive_s <= 0) return;
    if (steady_ms() - last_keepalive_ < conn_.options().keepalive_s * 1000LL) return;
    last_keepalive_ = steady_ms();
    if (ssh_send_ignore(session_, "keepalive") != SSH_OK) drop(ssh_get_error(session_));
  }

  void drop(const std::string& why) {
    result_.dropped = true;
    result_.drop_reason = why;
    done_ = true;
  }

  SshConnection& conn_;
  ssh_session session_;
  ssh_channel ch_ = nullptr;
  bool tty_;
  StdioFds io_;
  SignalPipe& signals_;
  OutputSink out_;
  std::unique_ptr<OutputSink> err_;  // null when stdout and stderr are one fd
  RemoteExit result_;
  std::string pending_;
  bool stdin_open_ = true;
  bool gave_up_ = false;
  bool done_ = false;
  std::int64_t last_keepalive_ = 0;
};

}  // namespace

RemoteExit ssh_exec(SshConnection& conn, const std::string& command, bool tty, const StdioFds& io,
                    SignalPipe& signals, bool gated) {
  return ExecPump(conn, tty, io, signals, gated).run(command);
}

}  // namespace asbx
