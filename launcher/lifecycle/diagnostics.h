// Every line the launcher says on the caller's stderr during a session (egress refusals from
// the proxy's threads, warnings, the session's own message) goes through one bounded,
// non-blocking, rate-limited path, so that no write to a caller that stopped reading can hold
// the control path (the timeout, signals, the container's removal, the record):
// - a line is written at once when the caller's stderr takes it (one write, at most
//   kMaxLine bytes: a pipe never gets half of it), else queued;
// - at most kMaxQueued bytes wait; beyond a burst of kBurst lines, kPerSecond a second pass;
//   the rest are dropped and counted, and the count is said in one line before the next line
//   that passes, and by flush(): "agent-sandbox: N diagnostic lines dropped (...)".
// - on a terminal each line starts with a reset (CAN, ST, SGR 0): a sequence the agent left
//   open on the same terminal (an unterminated title, the conceal attribute) cannot swallow
//   or hide it.
// What the lines say is also in the status record (the egress tally, the warnings), so what
// is dropped here is only the running commentary.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

namespace asbx {

class OutputSink;

class Diagnostics {
 public:
  static constexpr std::size_t kMaxLine = 1024;
  static constexpr std::size_t kMaxQueued = 64 * 1024;
  static constexpr int kBurst = 100;
  static constexpr int kPerSecond = 10;
  static constexpr std::int64_t kExitGraceMs = 2000;  // how long the end waits for a caller to read
  static constexpr const char* kTerminalReset = "\x18\x1b\\\x1b[0m";  // CAN, ST, SGR 0

  // The process's stderr (created on first use).
  static Diagnostics& caller_stderr();
  // Lines to `fd`; `clock` gives steady milliseconds (tests pass their own).
  explicit Diagnostics(int fd, std::int64_t (*clock)() = nullptr);
  ~Diagnostics();
  Diagnostics(const Diagnostics&) = delete;
  Diagnostics& operator=(const Diagnostics&) = delete;

  // One line (a newline is added; a longer one is cut at kMaxLine). Never blocks.
  void say(const std::string& line);
  // Waits at most `grace_ms` for the caller to take what is queued, then says what was
  // dropped (if it can). Returns true when nothing is left.
  bool flush(std::int64_t grace_ms);
  std::int64_t dropped() const;

 private:
  bool admit();  // the rate limit; called with mutex_ held
  void enqueue(std::string text);
  void write_queued();
  void say_dropped();

  mutable std::mutex mutex_;
  std::unique_ptr<OutputSink> sink_;
  std::int64_t (*clock_)();
  bool terminal_ = false;  // the fd is a terminal: each line starts with kTerminalReset
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  double tokens_ = kBurst;
  std::int64_t refilled_at_ = -1;
  std::int64_t dropped_ = 0;   // in all
  std::int64_t unsaid_ = 0;    // dropped since the last summary line
};

// The usual call: one line on the caller's stderr through the process's Diagnostics.
void say(const std::string& line);
// At the end: the process's Diagnostics flushed (when anything was said); see flush().
bool flush_diagnostics(std::int64_t grace_ms = Diagnostics::kExitGraceMs);

}  // namespace asbx
