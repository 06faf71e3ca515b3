#include "launcher/wall/helper_channel.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/beneath.h"

namespace asbx {

void helper_fails(int channel, int step, int err) {
  HelperFailure f{step, err};
  (void)!::write(channel, &f, sizeof f);
  ::_exit(1);
}

namespace {

// A message of `iov` with room for one SCM_RIGHTS fd in `control`.
struct FdMessage {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  explicit FdMessage(iovec& iov) {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
};

}  // namespace

bool helper_send_fd(int channel, int fd) {
  char byte = 0;
  iovec iov{&byte, 1};
  FdMessage m(iov);
  msghdr& msg = m.msg;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return ::sendmsg(channel, &msg, MSG_NOSIGNAL) == 1;
}

bool same_namespace(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

HelperAnswer helper_answer(int channel, int timeout_ms) {
  HelperAnswer a;
  pollfd p{channel, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) {
    a.timed_out = true;
    return a;
  }
  char buf[sizeof(HelperFailure)] = {};
  iovec iov{buf, sizeof buf};
  FdMessage m(iov);
  ssize_t n = ::recvmsg(channel, &m.msg, MSG_CMSG_CLOEXEC);
  cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&m.msg) : nullptr;
  if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
    std::memcpy(&a.fd, CMSG_DATA(c), sizeof a.fd);
  } else if (n == static_cast<ssize_t>(sizeof(HelperFailure))) {
    std::memcpy(&a.failure, buf, sizeof a.failure);
    a.failed = true;
  }
  return a;
}

int run_helper(long pid, ErrorKind kind, const std::string& prefix, const std::function<void(int, int, int)>& child,
               const std::function<int(int)>& receive) {
  auto fail = [&](const std::string& why) { throw Error(kind, prefix + why + ": " + std::strerror(errno)); };
  std::string ns = "/proc/" + std::to_string(pid) + "/ns/";
  UniqueFd netns(::open((ns + "net").c_str(), O_RDONLY | O_CLOEXEC)), userns;
  if (!netns) fail("cannot open " + ns + "net");
  if (!same_namespace(ns + "user", "/proc/self/ns/user")) {
    userns = UniqueFd(::open((ns + "user").c_str(), O_RDONLY | O_CLOEXEC));
    if (!userns) fail("cannot open " + ns + "user");
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) fail("socketpair");
  UniqueFd ours(pair[0]), theirs(pair[1]);
  pid_t kid = ::fork();
  if (kid == 0) {
    ::close(ours.release());
    child(userns.get(), netns.get(), theirs.get());
    ::_exit(1);
  }
  if (kid < 0) fail("fork");
  theirs = UniqueFd();
  try {
    int fd = receive(ours.get());
    ::waitpid(kid, nullptr, 0);
    return fd;
  } catch (...) {
    ::kill(kid, SIGKILL);
    ::waitpid(kid, nullptr, 0);
    throw;
  }
}

}  // namespace asbx
