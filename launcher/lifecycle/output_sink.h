// One destination of the agent's output (the caller's stdout or stderr), written without
// ever blocking the session: whatever the caller's pipes do, the timeout, the caller's
// signals and the connection-drop rule keep firing. A pipe, FIFO or terminal is reopened
// non-blocking through /proc/self/fd (a new open file description: the caller's own keeps
// its flags); a socket is written with MSG_DONTWAIT; a regular file never blocks. When the
// reopen is refused, writes go out only when poll says the fd is writable, one page at a time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace asbx {

class OutputSink {
 public:
  explicit OutputSink(int fd);
  ~OutputSink();
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  void push(const char* data, std::size_t size);  // queued; flushed as far as possible now
  // One write of at most `size` bytes of the caller's own (nothing queued here), never
  // blocking: the bytes taken, or -1 when the fd would block now or its reader is gone.
  ssize_t write_now(const char* data, std::size_t size);
  void flush(bool writable);                      // writable: poll said POLLOUT
  std::size_t pending() const { return buf_.size() - off_; }
  bool gone() const { return gone_; }             // the reader went away (EPIPE, POLLERR)
  void mark_gone();
  std::int64_t drop();                            // forget what is queued; returns its size
  int poll_fd() const { return orig_; }
  std::size_t held() const { return buf_.size(); }  // pending plus what was written but not yet compacted away

 private:
  void write_some(bool writable);
  void compact();
  int orig_;
  int wfd_;
  bool owned_ = false;
  bool socket_ = false;
  bool regular_ = false;
  bool paged_ = false;  // blocking fd: at most one page, only when poll said so
  bool gone_ = false;
  std::string buf_;
  std::size_t off_ = 0;
};

}  // namespace asbx
