// Preloaded into every dynamically linked program of a gVisor session (/etc/ld.so.preload, bound in
// read-only by the launcher; docs/ISOLATION.md "Debian's sentry"). Two bugs of Debian 12's runsc
// (0.0~20221219), both fixed in later gVisor releases the same way:
// - statx and newfstatat answer EINVAL when AT_NO_AUTOMOUNT is set, which coreutils' `ls -l` and
//   `stat` always set. gVisor has no automount points, so the flag asks for nothing there: cleared.
// - read(2)/write(2) on a blocking socket of the host network (network=host) answer EAGAIN instead
//   of waiting (bash's /dev/tcp, head or cat on a socket). Then the call waits for the socket with
//   poll (its SO_RCVTIMEO/SO_SNDTIMEO, if the sentry reports one: this one accepts and ignores
//   them, getsockopt answers 0, so the wait has no end but the socket's own) and is made again.
// Nothing else changes: a program that makes the system call itself still meets the sentry's answer.
#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

namespace {

// Did a blocking socket answer EAGAIN? Then wait for it as the kernel would have: true to try again.
bool wait_blocking_socket(int fd, short events) {
  if (errno != EAGAIN) return false;
  int saved = errno;
  struct stat st;
  long fl = ::syscall(SYS_fcntl, fd, F_GETFL);
  if (fl < 0 || (fl & O_NONBLOCK) || ::syscall(SYS_fstat, fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    errno = saved;
    return false;
  }
  timeval tv{};
  socklen_t len = sizeof tv;
  int opt = events == POLLIN ? SO_RCVTIMEO : SO_SNDTIMEO;
  int timeout = -1;
  if (::syscall(SYS_getsockopt, fd, SOL_SOCKET, opt, &tv, &len) == 0 && (tv.tv_sec || tv.tv_usec))
    timeout = static_cast<int>(tv.tv_sec * 1000 + tv.tv_usec / 1000);
  pollfd p{fd, events, 0};
  long n = ::syscall(SYS_poll, &p, 1, timeout);
  if (n == 0) errno = saved;  // the socket's own timeout: EAGAIN, as the kernel answers then
  return n > 0;               // n < 0: poll's errno (EINTR for a signal), as read's would be
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int statx(int dirfd, const char* path, int flags, unsigned int mask,
                                                 struct statx* buf) {
  return static_cast<int>(::syscall(SYS_statx, dirfd, path, flags & ~AT_NO_AUTOMOUNT, mask, buf));
}

__attribute__((visibility("default"))) int fstatat(int dirfd, const char* path, struct stat* buf, int flags) {
  return static_cast<int>(::syscall(SYS_newfstatat, dirfd, path, buf, flags & ~AT_NO_AUTOMOUNT));
}

__attribute__((visibility("default"))) int fstatat64(int dirfd, const char* path, struct stat64* buf, int flags) {
  return static_cast<int>(::syscall(SYS_newfstatat, dirfd, path, buf, flags & ~AT_NO_AUTOMOUNT));
}

__attribute__((visibility("default"))) ssize_t read(int fd, void* buf, size_t count) {
  for (;;) {
    long n = ::syscall(SYS_read, fd, buf, count);
    if (n >= 0 || !wait_blocking_socket(fd, POLLIN)) return n;
  }
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, size_t count) {
  for (;;) {
    long n = ::syscall(SYS_write, fd, buf, count);
    if (n >= 0 || !wait_blocking_socket(fd, POLLOUT)) return n;
  }
}

}  // extern "C"
