#include "launcher/wall/net_io.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asbx {
namespace {

constexpr std::int64_t kConnectMs = 10'000;
constexpr std::int64_t kLingerMs = 1'000;
constexpr std::size_t kLingerBytes = 64 * 1024;

sockaddr_storage socket_address(const IpAddress& a, int port, socklen_t& len) {
  sockaddr_storage ss{};
  if (a.v6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(static_cast<std::uint16_t>(port));
    std::memcpy(&s6->sin6_addr, a.bytes.data(), 16);
    len = sizeof *s6;
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(static_cast<std::uint16_t>(port));
    std::memcpy(&s4->sin_addr, a.bytes.data(), 4);
    len = sizeof *s4;
  }
  return ss;
}

}  // namespace

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int clamp_ms(std::int64_t ms) { return static_cast<int>(std::max<std::int64_t>(0, std::min<std::int64_t>(ms, 60'000))); }

// Waits for `events` on fd until `until` (steady ms); false on timeout, stop or error.
bool wait_for(int fd, short events, int stop_fd, std::int64_t until) {
  while (true) {
    std::int64_t left = until - now_ms();
    if (left <= 0) return false;
    pollfd p[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    int n = ::poll(p, 2, clamp_ms(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || p[1].revents) return false;
    if (p[0].revents & (events | POLLHUP | POLLERR)) return true;
  }
}

bool send_all(int fd, std::string_view data, int stop_fd, std::int64_t until) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd, POLLOUT, stop_fd, until)) continue;
    return false;
  }
  return true;
}

// Appends what arrives before `until`; false on EOF, error, timeout or stop.
bool read_more(int fd, std::string& buf, int stop_fd, std::int64_t until) {
  char chunk[4096];
  while (true) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      buf.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait_for(fd, POLLIN, stop_fd, until)) return false;
  }
}

// A relay forwards what it has at once: with Nagle on, a body's last short segment waits for the
// peer's delayed ACK (≈ 40 ms a request through the tunnel, bench/inject.py).
void no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// The first address that accepts a connection, or -1.
int connect_any(const std::vector<IpAddress>& addresses, int port, int stop_fd) {
  for (const auto& a : addresses) {
    int fd = ::socket(a.v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    socklen_t len = 0;
    sockaddr_storage ss = socket_address(a, port, len);
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&ss), len);
    if (rc != 0 && errno == EINPROGRESS && wait_for(fd, POLLOUT, stop_fd, now_ms() + kConnectMs)) {
      int err = 0;
      socklen_t l = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l);
      rc = err == 0 ? 0 : -1;
    }
    if (rc == 0) {
      no_delay(fd);
      return fd;
    }
    ::close(fd);
  }
  return -1;
}

// RFC 9112 §9.6: a connection refused while the agent may still be sending (a body after a
// refused head) is closed in stages, so that the answer is not lost to a reset: half-close,
// then read and drop what comes, for a moment and a few KiB at most.
void close_lingering(int fd, int stop_fd) {
  ::shutdown(fd, SHUT_WR);
  char dropped[4096];
  std::size_t total = 0;
  for (std::int64_t until = now_ms() + kLingerMs; total < kLingerBytes && wait_for(fd, POLLIN, stop_fd, until);) {
    ssize_t n = ::recv(fd, dropped, sizeof dropped, 0);
    if (n <= 0) break;
    total += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

void close_at_once(int fd, std::string_view answer) {
  (void)!::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd, SHUT_WR);
  char dropped[4096];
  for (int i = 0; i < 16 && ::recv(fd, dropped, sizeof dropped, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(fd);
}

}  // namespace asbx
