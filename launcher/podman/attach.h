// The one hand-written HTTP exchange: the attach hijack. cpp-httplib 0.11 cannot write
// stdin on an upgraded connection, so this opens its own AF_UNIX socket, sends the
// upgrade request and hands back the raw duplex stream.
#pragma once
#include <string>

namespace asbx {

class AttachStream {
 public:
  // Connects and completes the upgrade; throws Error(podman_unreachable / start_failed).
  AttachStream(const std::string& socket, const std::string& container_id);
  ~AttachStream();
  AttachStream(const AttachStream&) = delete;
  AttachStream& operator=(const AttachStream&) = delete;
  int fd() const { return fd_; }
  // Bytes that arrived together with the response head (already stream data).
  std::string take_leftover() { return std::move(leftover_); }
  void close_stdin();  // shutdown(SHUT_WR): the container sees EOF

 private:
  int fd_ = -1;
  std::string leftover_;
};

}  // namespace asbx
