#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/lifecycle/late_close.h"

using namespace asbx;

namespace {
bool open_fd(int fd) { return ::fcntl(fd, F_GETFD) != -1; }
int fresh_fd() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }
}  // namespace

TEST_CASE("late_close: kept open until dropped, sorted, and never more than kMaxLateFds") {
  drop_late_fds();
  int a = fresh_fd(), b = fresh_fd();
  close_late(UniqueFd(b));
  close_late(UniqueFd(a));
  close_late(UniqueFd());  // nothing
  LateFds kept = late_fds();
  REQUIRE(kept.n == 2);
  CHECK(kept.fd[0] == a);
  CHECK(kept.fd[1] == b);
  CHECK((open_fd(a) && open_fd(b)));
  int more[kMaxLateFds];
  for (int& fd : more) close_late(UniqueFd(fd = fresh_fd()));
  CHECK(late_fds().n == kMaxLateFds);
  CHECK_FALSE(open_fd(more[kMaxLateFds - 1]));  // past the table: closed at once
  CHECK(open_fd(more[kMaxLateFds - 3]));
  drop_late_fds();
  CHECK(late_fds().n == 0);
  CHECK_FALSE((open_fd(a) || open_fd(b) || open_fd(more[0])));
}

TEST_CASE("late_close: a forked child closes every fd from 4 up but the kept ones") {
  int fds[6];
  for (int& fd : fds) {  // all above 3: fd 3 is the child's answer
    int low = fresh_fd();
    fd = ::fcntl(low, F_DUPFD_CLOEXEC, 10);
    ::close(low);
  }
  LateFds keep;
  keep.fd[keep.n++] = 2;  // below 4: ignored
  keep.fd[keep.n++] = fds[1];
  keep.fd[keep.n++] = fds[4];
  int p[2];
  REQUIRE(::pipe(p) == 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[1], 3);  // the answer goes out on fd 3, which stays
    close_from_4_but(keep);
    char open[6];
    for (int i = 0; i < 6; ++i) open[i] = ::fcntl(fds[i], F_GETFD) != -1 ? '1' : '0';
    (void)!::write(3, open, 6);
    ::_exit(0);
  }
  ::close(p[1]);
  char got[7] = {};
  CHECK(::read(p[0], got, 6) == 6);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(std::string(got) == "010010");
  ::close(p[0]);
  for (int fd : fds) ::close(fd);
}
