#include "launcher/lifecycle/seccomp_listener.h"
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/session_owner.h"
#include "launcher/lifecycle/session_dir.h"

#include <cerrno>
#include <cstring>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/util.h"
#include "launcher/podman/gc.h"

namespace asbx {
namespace {

constexpr std::size_t kStateMax = 64 * 1024;  // runc's state JSON is a few KiB

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw Error(ErrorKind::seccomp_unavailable, "the seccomp recorder's socket " + path + ": " + what + "; nothing was started");
}

std::string errno_text(const char* step) { return std::string(step) + ": " + std::strerror(errno); }

// The fd of a cmsg (SCM_RIGHTS): exactly one; any other is closed.
int one_fd(msghdr& msg, std::string& why) {
  int got = -1, count = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < n; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (count++ == 0) got = fd;
      else ::close(fd);
    }
  }
  if (count == 1) return got;
  if (got >= 0) ::close(got);
  why = "runc's message carried " + std::to_string(count) + " fds, not the one notify fd";
  return -1;
}

bool state_matches(const std::string& text, long pid, std::string& why) {
  nlohmann::json state = nlohmann::json::parse(text, nullptr, false);
  if (!state.is_object() || !state.contains("fds") || state["fds"] != nlohmann::json::array({"seccompFd"})) {
    why = "runc's message is not a container process state naming one seccompFd";
    return false;
  }
  if (pid > 0 && state.value("pid", 0L) != pid) {
    why = "runc's state names pid " + std::to_string(state.value("pid", 0L)) + ", not the container's " + std::to_string(pid);
    return false;
  }
  return true;
}

}  // namespace

UniqueFd receive_notify_fd(int listener_fd, long pid, std::string& why) {
  UniqueFd conn(::accept4(listener_fd, nullptr, nullptr, SOCK_CLOEXEC));
  if (!conn) return why = errno == EAGAIN ? "runc did not connect (no notify fd was sent)" : errno_text("accept"), UniqueFd();
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) return why = errno_text("SO_PEERCRED"), UniqueFd();
  if (peer.uid != 0 && peer.uid != ::getuid())
    return why = "the peer is uid " + std::to_string(peer.uid) + ", neither root nor this user", UniqueFd();
  timeval tv{2, 0};  // runc sent before podman's init returned: it is there, or never comes
  ::setsockopt(conn.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string text(kStateMax, '\0');
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  iovec iov{text.data(), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(conn.get(), &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0) return why = n == 0 ? "runc closed without a message" : errno_text("recvmsg"), UniqueFd();
  UniqueFd notify(one_fd(msg, why));
  if (!notify) return UniqueFd();
  std::size_t have = std::size_t(n);
  while (have < text.size() && (n = ::recv(conn.get(), text.data() + have, text.size() - have, 0)) > 0) have += std::size_t(n);
  text.resize(have);
  if (!state_matches(text, pid, why)) return UniqueFd();
  std::uint64_t id = 0;  // a notify fd answers ENOENT for an id it never issued; anything else ENOTTY/EINVAL
  if (::ioctl(notify.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 || errno != ENOENT)
    return why = "the fd runc sent is not a seccomp notify fd", UniqueFd();
  return notify;
}

void SeccompListener::bind(const LaunchPlan& plan) {
  const std::string& path = plan.seccomp.listener;
  if (path.empty()) return;
  std::string parent = plan.session_dir.substr(0, plan.session_dir.rfind('/')), why;
  if (!make_dirs(parent, &why)) refuse(path, why);
  {
    SessionDirLock lock;  // held until the owner is written: gc reads it under the lock (session_dir.h)
    if (!take_session_dir(plan, lock)) refuse(path, errno_text(("cannot take " + plan.session_dir).c_str()));
    dir_ = plan.session_dir;
    std::string owner = plan.session_dir + "/owner";
    struct stat st{};
    if (::lstat(owner.c_str(), &st) != 0) {  // gc finds the dir by it if this launcher is killed before its container exists
      owner_ = owner;  // first: close() removes one written in part
      if (!write_session_owner(owner, plan)) refuse(path, errno_text(("write " + owner).c_str()));
    }
  }
  fd_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) refuse(path, "longer than a unix socket address");
  std::memcpy(addr.sun_path, path.data(), path.size());
  ::unlink(path.c_str());  // one a killed launcher of this id left (no live owner: above; the dir is 0700)
  bool ok = fd_ && ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (ok) path_ = path;
  if (!ok || ::listen(fd_.get(), 4) != 0) {
    why = errno_text(ok ? "listen" : "bind");
    close();
    refuse(path, why);
  }
}

UniqueFd SeccompListener::take(long pid) {
  if (!fd_) return UniqueFd();
  std::string why;
  UniqueFd notify = receive_notify_fd(fd_.get(), pid, why);
  std::string path = path_;
  close();
  if (!notify) refuse(path, why);
  return notify;
}

void SeccompListener::close() {
  fd_ = UniqueFd();
  if (!path_.empty()) ::unlink(path_.c_str());
  path_.clear();
  if (!dir_.empty()) leave_session_dir(dir_, owner_);  // the dir stays while a seat tmpfs or persist's owner is in it
  owner_.clear();
  dir_.clear();
}

}  // namespace asbx
