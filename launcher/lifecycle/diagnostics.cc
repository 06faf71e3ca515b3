#include "launcher/lifecycle/diagnostics.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <poll.h>
#include <unistd.h>

#include "base/util.h"
#include "launcher/lifecycle/output_sink.h"

namespace asbx {
namespace {

std::int64_t steady_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string cut(const std::string& line) {
  if (line.size() < Diagnostics::kMaxLine) return line + "\n";
  return line.substr(0, Diagnostics::kMaxLine - 5) + "...\n";
}

}  // namespace

namespace {
std::atomic<Diagnostics*> process_diagnostics{nullptr};
}  // namespace

Diagnostics& Diagnostics::caller_stderr() {
  static Diagnostics* process = new Diagnostics(2);  // never destroyed: a proxy thread may still say at exit
  process_diagnostics.store(process);
  return *process;
}

bool flush_diagnostics(std::int64_t grace_ms) {
  Diagnostics* d = process_diagnostics.load();
  return !d || d->flush(grace_ms);
}

Diagnostics::Diagnostics(int fd, std::int64_t (*clock)())
    : sink_(std::make_unique<OutputSink>(fd)), clock_(clock ? clock : steady_now), terminal_(::isatty(fd) == 1) {}

Diagnostics::~Diagnostics() = default;

void Diagnostics::say(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!admit()) {
    ++dropped_;
    ++unsaid_;
    return;
  }
  if (unsaid_ > 0) say_dropped();
  enqueue(cut(printable(line, kMaxLine)));  // the one escaping function: no byte of the agent's acts on the terminal
  write_queued();
}

bool Diagnostics::flush(std::int64_t grace_ms) {
  const std::int64_t until = steady_now() + grace_ms;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (unsaid_ > 0) say_dropped();
    write_queued();
    std::int64_t left = until - steady_now();
    if (queue_.empty() || sink_->gone() || left <= 0) break;
    pollfd p{sink_->poll_fd(), POLLOUT, 0};
    lock.unlock();  // other threads may say meanwhile; they never wait for the caller
    ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left, 100)));
    lock.lock();
  }
  return queue_.empty() && unsaid_ == 0;
}

std::int64_t Diagnostics::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

// A token bucket: kBurst lines at once, then kPerSecond a second.
bool Diagnostics::admit() {
  std::int64_t now = clock_();
  if (refilled_at_ >= 0)
    tokens_ = std::min<double>(kBurst, tokens_ + static_cast<double>(now - refilled_at_) * kPerSecond / 1000.0);
  refilled_at_ = now;
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

void Diagnostics::enqueue(std::string text) {
  if (terminal_) text.insert(0, kTerminalReset);
  if (queued_bytes_ + text.size() > kMaxQueued) {
    ++dropped_;
    ++unsaid_;
    return;
  }
  queued_bytes_ += text.size();
  queue_.push_back(std::move(text));
}

void Diagnostics::say_dropped() {
  std::string text = std::string(terminal_ ? kTerminalReset : "") + program_invocation_short_name + ": " +
                     std::to_string(unsaid_) +
                     " diagnostic line(s) dropped (too many at once, or stderr not read); the status record keeps "
                     "the counts\n";
  if (queued_bytes_ + text.size() > kMaxQueued) return;  // said once there is room
  queued_bytes_ += text.size();
  queue_.push_back(std::move(text));
  unsaid_ = 0;
}

// Whole lines, each in one write (at most kMaxLine bytes: a pipe takes all of it or none).
void Diagnostics::write_queued() {
  while (!queue_.empty()) {
    std::string& front = queue_.front();
    ssize_t n = sink_->write_now(front.data(), front.size());
    if (n < 0) return;  // it would block, or the reader is gone
    std::size_t wrote = static_cast<std::size_t>(n);
    queued_bytes_ -= wrote;
    if (wrote < front.size()) {
      front.erase(0, wrote);  // a socket or terminal took part of it
      continue;
    }
    queue_.pop_front();
  }
}

void say(const std::string& line) { Diagnostics::caller_stderr().say(line); }

}  // namespace asbx
