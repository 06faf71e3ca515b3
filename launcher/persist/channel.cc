#include "launcher/persist/channel.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/pump.h"

namespace asbx {
namespace {

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw Error(ErrorKind::internal, "attach socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

[[noreturn]] void os_error(const std::string& what) {
  throw Error(ErrorKind::internal, what + ": " + std::strerror(errno));
}

}  // namespace

UniqueFd listen_attach(const std::string& path) {
  sockaddr_un a = address_of(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) os_error("cannot create the attach socket");
  mode_t old = ::umask(0177);  // the socket file is born 0600: no window in which it is wider
  int rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::umask(old);
  if (rc != 0) os_error("cannot bind the attach socket " + path);
  if (::listen(fd.get(), 8) != 0) os_error("cannot listen on the attach socket " + path);
  return fd;
}

UniqueFd connect_attach(const std::string& path, const std::string& session) {
  sockaddr_un a = address_of(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) os_error("cannot create a socket");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  int err = errno;
  if (err == ENOENT || err == ENOTDIR)
    throw Error(ErrorKind::attach_refused, "no persistent session '" + session + "' on this seat (no attach socket at " + path + ")");
  if (err == EACCES || err == EPERM)
    throw Error(ErrorKind::attach_refused, "session '" + session + "' is not yours: " + path +
                                               " belongs to the seat user who started it (only that user, or root, may attach)");
  if (err == ECONNREFUSED)
    throw Error(ErrorKind::attach_refused, "session '" + session + "' is not running: its supervisor is gone (" + path +
                                               " answers nothing; agent-sandbox gc removes what it left)");
  throw Error(ErrorKind::attach_refused, "cannot reach session '" + session + "' at " + path + ": " + std::strerror(err));
}

int connect_errno(const std::string& path) {
  sockaddr_un a = address_of(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return errno;
  return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 ? 0 : errno;
}

long peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  return static_cast<long>(cred.uid);
}

PtyPair open_pty(int rows, int cols) {
  PtyPair p;
  p.master = UniqueFd(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!p.master || ::grantpt(p.master.get()) != 0 || ::unlockpt(p.master.get()) != 0)
    os_error("cannot open a pty for the session");
  char name[128];
  if (::ptsname_r(p.master.get(), name, sizeof name) != 0) os_error("cannot name the session's pty");
  p.slave = UniqueFd(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!p.slave) os_error(std::string("cannot open the session's pty ") + name);
  ::fcntl(p.master.get(), F_SETFL, ::fcntl(p.master.get(), F_GETFL) | O_NONBLOCK);
  termios raw{};  // raw from the start: the terminal's bytes pass untouched (no echo, no signals)
  if (::tcgetattr(p.slave.get(), &raw) == 0) {
    ::cfmakeraw(&raw);
    ::tcsetattr(p.slave.get(), TCSANOW, &raw);
  }
  set_window(p.master.get(), rows, cols);
  return p;
}

void set_window(int master, int rows, int cols) {
  winsize ws{};
  ws.ws_row = static_cast<unsigned short>(rows);
  ws.ws_col = static_cast<unsigned short>(cols);
  ::ioctl(master, TIOCSWINSZ, &ws);
}

bool send_within(int fd, const std::string& data, int wait_ms) {
  std::size_t off = 0;
  std::int64_t until = steady_ms() + wait_ms;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    std::int64_t left = until - steady_ms();
    if (left <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(left));
  }
  return true;
}

}  // namespace asbx
