// The recorder against this machine's kernel (no podman): a child installs a filter whose keyctl
// notifies, the fd comes over a unix socket as runc sends it, and SeccompRecorder answers it. Also
// the fail-closed fact the recorder relies on (seccomp_unotify(2)): once the notify fd is closed,
// the kernel answers a notifying call ENOSYS, a pending one too.
#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "launcher/lifecycle/seccomp_listener.h"
#include "launcher/lifecycle/seccomp_recorder.h"

using namespace asbx;

namespace {

void send_fd(int sock, const std::string& msg, int fd) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{const_cast<char*>(msg.data()), msg.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  (void)!::sendmsg(sock, &m, 0);
}

// A child whose keyctl notifies. It connects to `listener_path` and sends its notify fd as runc
// does (its state JSON, SCM_RIGHTS), waits for a byte on `go`, calls keyctl, writes its errno.
pid_t notifying_child(const std::string& listener_path, int go, int go_write) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::close(go_write);  // the parent's end only: its close is the child's EOF
  sock_filter f[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
                     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  sock_fprog prog{sizeof f / sizeof f[0], f};
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  int fd = int(::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
  if (fd < 0) ::_exit(100);
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, listener_path.c_str(), sizeof a.sun_path - 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ::_exit(101);
  send_fd(s, "{\"ociVersion\":\"1.0.2\",\"fds\":[\"seccompFd\"],\"pid\":" + std::to_string(::getpid()) + "}", fd);
  ::close(s);
  ::close(fd);
  char b;
  if (::read(go, &b, 1) != 1) ::_exit(102);
  long r = ::syscall(SYS_keyctl, 0, 0, 0, 0, 0);
  ::_exit(r < 0 ? errno : 0);
}

int exit_of(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Rig {
  LaunchPlan plan;
  SeccompListener listener;
  int go[2];
  pid_t child = -1;
  Rig() {
    char dir[] = "/tmp/asbx-unotify-XXXXXX";
    REQUIRE(::mkdtemp(dir));
    plan.session_dir = std::string(dir) + "/s";
    plan.seccomp.path = std::string(dir) + "/p.json";
    plan.seccomp.listener = plan.session_dir + "/seccomp.sock";
    listener.bind(plan);
    REQUIRE(::pipe(go) == 0);
    child = notifying_child(plan.seccomp.listener, go[0], go[1]);
    ::close(go[0]);
    // the child's connection in the backlog, as runc's is when podman's init returns
    pollfd p{listener.fd(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, 5000) == 1);
  }
  ~Rig() {
    listener.close();
    ::rmdir(plan.session_dir.substr(0, plan.session_dir.rfind('/')).c_str());
  }
};

}  // namespace

TEST_CASE("seccomp notify (kernel): the recorder answers the row's errno and counts the call") {
  Rig rig;
  UniqueFd fd = rig.listener.take(rig.child);
  REQUIRE(fd);
  CHECK(::access(rig.plan.seccomp.listener.c_str(), F_OK) != 0);  // the socket is gone once taken
  SeccompRecorder rec;
  rec.adopt(std::move(fd), false, nullptr);
  CHECK(::write(rig.go[1], "g", 1) == 1);
  CHECK(exit_of(rig.child) == EPERM);  // keyctl's row: EPERM, answered by the recorder
  rec.stop();
  nlohmann::json j = rec.json(rig.plan);
  CHECK(j["recorded"] == true);
  CHECK(j["calls"] == nlohmann::json{{"keyctl", 1}});
  CHECK(j["first"] == "keyctl");
  ::close(rig.go[1]);
}

TEST_CASE("seccomp notify (kernel): a closed notify fd makes the kernel answer ENOSYS, a waiting call too") {
  {
    Rig rig;
    UniqueFd fd = rig.listener.take(rig.child);
    REQUIRE(fd);
    fd = UniqueFd();  // the recorder gone before the call
    CHECK(::write(rig.go[1], "g", 1) == 1);
    CHECK(exit_of(rig.child) == ENOSYS);
    ::close(rig.go[1]);
  }
  {
    Rig rig;
    UniqueFd fd = rig.listener.take(rig.child);
    REQUIRE(fd);
    CHECK(::write(rig.go[1], "g", 1) == 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the call waits on nobody
    int status = 0;
    CHECK(::waitpid(rig.child, &status, WNOHANG) == 0);
    fd = UniqueFd();  // the recorder gone mid-call
    CHECK(exit_of(rig.child) == ENOSYS);
    ::close(rig.go[1]);
  }
}

TEST_CASE("seccomp notify (kernel): the listener refuses what is not runc's notify fd") {
  Rig rig;
  std::string why;
  UniqueFd fd = receive_notify_fd(rig.listener.fd(), rig.child + 1, why);
  CHECK_FALSE(fd);
  CHECK(why == "runc's state names pid " + std::to_string(rig.child) + ", not the container's " + std::to_string(rig.child + 1));
  ::close(rig.go[1]);
  exit_of(rig.child);
}
