#include "launcher/lifecycle/output_sink.h"

#include <cerrno>
#include <algorithm>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace asbx {
namespace {

constexpr std::size_t kPage = 4096;

int reopen_nonblocking(int fd) {
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  return ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

}  // namespace

OutputSink::OutputSink(int fd) : orig_(fd), wfd_(fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return;
  regular_ = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
  socket_ = S_ISSOCK(st.st_mode);
  if (regular_ || socket_) return;
  if (::fcntl(fd, F_GETFL) & O_NONBLOCK) return;  // already non-blocking: use as is
  int again = reopen_nonblocking(fd);
  if (again >= 0) {
    wfd_ = again;
    owned_ = true;
  } else {
    paged_ = true;
  }
}

OutputSink::~OutputSink() {
  if (owned_) ::close(wfd_);
}

void OutputSink::push(const char* data, std::size_t size) {
  if (gone_) return;
  buf_.append(data, size);
  write_some(false);
}

void OutputSink::flush(bool writable) { write_some(writable); }

ssize_t OutputSink::write_now(const char* data, std::size_t size) {
  if (gone_) return -1;
  if (paged_) {  // a blocking fd: only when poll says it takes a page now
    pollfd p{orig_, POLLOUT, 0};
    if (::poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT)) return -1;
    size = std::min(size, kPage);
  }
  for (;;) {
    ssize_t n = socket_ ? ::send(wfd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL) : ::write(wfd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -1;
    if (n <= 0) mark_gone();
    return n <= 0 ? -1 : n;
  }
}

void OutputSink::mark_gone() {
  gone_ = true;
  drop();
}

std::int64_t OutputSink::drop() {
  std::int64_t n = static_cast<std::int64_t>(pending());
  buf_.clear();
  off_ = 0;
  return n;
}

void OutputSink::write_some(bool writable) {
  while (!gone_ && pending() > 0) {
    if (paged_ && !writable) break;
    std::size_t want = paged_ ? std::min(pending(), kPage) : pending();
    ssize_t n = socket_ ? ::send(wfd_, buf_.data() + off_, want, MSG_DONTWAIT | MSG_NOSIGNAL)
                        : ::write(wfd_, buf_.data() + off_, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return mark_gone();
    off_ += static_cast<std::size_t>(n);
    if (paged_) writable = false;  // one page per poll round
  }
  compact();
}

// What was written is forgotten as soon as it is at least half the buffer: the buffer then
// holds at most twice what is pending (which the pump bounds), however long the caller
// keeps it from draining completely. Each byte is moved at most once per compaction it
// survives, and a compaction moves fewer bytes than were written since the last one.
void OutputSink::compact() {
  if (off_ == 0) return;
  if (off_ == buf_.size()) buf_.clear();
  else if (off_ >= buf_.size() / 2) buf_.erase(0, off_);
  else return;
  off_ = 0;
}

}  // namespace asbx
