#include "launcher/wall/helper_channel.h"

#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace asbx {

void helper_fails(int channel, int step, int err) {
  HelperFailure f{step, err};
  (void)!::write(channel, &f, sizeof f);
  ::_exit(1);
}

bool helper_send_fd(int channel, int fd) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
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
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(channel, &msg, MSG_CMSG_CLOEXEC);
  cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&msg) : nullptr;
  if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
    std::memcpy(&a.fd, CMSG_DATA(c), sizeof a.fd);
  } else if (n == static_cast<ssize_t>(sizeof(HelperFailure))) {
    std::memcpy(&a.failure, buf, sizeof a.failure);
    a.failed = true;
  }
  return a;
}

}  // namespace asbx
