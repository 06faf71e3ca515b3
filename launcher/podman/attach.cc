#include "launcher/podman/attach.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"
#include "launcher/podman/podman_api.h"

namespace asbx {
namespace {

int connect_unix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(ErrorKind::internal, std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    ::close(fd);
    throw Error(ErrorKind::podman_unreachable, "podman socket path too long: " + path);
  }
  std::strcpy(addr.sun_path, path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    throw Error(ErrorKind::podman_unreachable, "podman API at " + path + " did not answer: " + std::strerror(err));
  }
  return fd;
}

std::string upgrade_request(const std::string& id) {
  // detachKeys= must be empty, or a ctrl-p ctrl-q pair in piped stdin would detach us.
  return "POST /v4.0.0/libpod/containers/" + id +
         "/attach?stream=true&stdin=true&stdout=true&stderr=true&detachKeys= HTTP/1.1\r\n"
         "Host: d\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n";
}

// Reads until the end of the response head; returns head, leaves the rest in `rest`.
std::string read_head(int fd, std::string& rest) {
  std::string buf;
  char chunk[4096];
  for (;;) {
    auto end = buf.find("\r\n\r\n");
    if (end != std::string::npos) {
      rest = buf.substr(end + 4);
      return buf.substr(0, end);
    }
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(ErrorKind::start_failed, "podman closed the attach connection before answering");
    buf.append(chunk, static_cast<std::size_t>(n));
  }
}

std::size_t content_length(const std::string& head) {
  std::string lower = head;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto at = lower.find("content-length:");
  return at == std::string::npos ? 0 : std::stoul(head.substr(at + 15));
}

}  // namespace

AttachStream::AttachStream(const std::string& socket, const std::string& id) {
  fd_ = connect_unix(socket);
  write_all(fd_, upgrade_request(id));
  std::string head = read_head(fd_, leftover_);
  int status = head.size() > 12 ? std::atoi(head.c_str() + 9) : 0;
  if (status == 101 || status == 200) return;
  // An error answer has a length: read exactly that, never to EOF.
  std::string body = leftover_;
  std::size_t want = content_length(head);
  while (body.size() < want) {
    char chunk[4096];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n <= 0) break;
    body.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd_);
  fd_ = -1;
  throw Error(ErrorKind::start_failed, "podman refused to attach (" + std::to_string(status) + "): " + api_message(body));
}

AttachStream::~AttachStream() {
  if (fd_ >= 0) ::close(fd_);
}

void AttachStream::close_stdin() { ::shutdown(fd_, SHUT_WR); }

}  // namespace asbx
