/* The second pass over the kernel surface (issue 34): the calls the table splits by argument and
   the ABIs it does not admit. One line per call: NAME<TAB>ok | ERRNO-NAME | SIG<NAME> (the call
   ran in a child, which the kernel killed with that signal). Built static on the host
   (tests/integration/test_seccomp_surface.py) and run inside real sessions; under podman's default
   (the control) the same calls reach the kernel.
   Usage: surface_probe [all | i386]   (i386: an int 0x80 call in this process itself) */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#define X32_BIT 0x40000000L

static char line[64];

static const char *errname(long rc) {
  if (rc >= 0) return "ok";
  const char *name = strerrorname_np(errno);
  snprintf(line, sizeof line, "%s", name ? name : "E?");
  return line;
}

/* i386's getpid (20) through int 0x80: AUDIT_ARCH_I386 for seccomp. */
static long getpid32(void) {
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11", "cc");
  if (ret < 0 && ret > -4096) { errno = (int)-ret; return -1; }
  return ret;
}

/* `call` in a child: its result, or the signal that killed the child. */
static const char *in_child(long (*call)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) { long rc = call(); _exit(rc >= 0 ? 0 : errno); }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) { snprintf(line, sizeof line, "SIG%s", sigabbrev_np(WTERMSIG(status))); return line; }
  errno = WEXITSTATUS(status);
  return errname(WEXITSTATUS(status) ? -1 : 0);
}

static long x32_getpid(void) { return syscall(X32_BIT | SYS_getpid); }

static long sock(long family, long type, long protocol) {
  long fd = syscall(SYS_socket, family, type, protocol);
  if (fd >= 0) close((int)fd);
  return fd;
}

static long pair(int family, int type) {
  int sv[2];
  long rc = socketpair(family, type, 0, sv);
  if (rc == 0) { close(sv[0]); close(sv[1]); }
  return rc;
}

static int sv[2] = {-1, -1};
static long oob_send(void) { return send(sv[0], "A", 1, MSG_OOB); }
static long oob_sendmsg(void) {
  struct iovec iov = {"B", 1};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  return sendmsg(sv[0], &m, MSG_OOB | MSG_DONTWAIT);
}
static long oob_recv(void) { char c; return recv(sv[1], &c, 1, MSG_OOB | MSG_DONTWAIT); }
static long plain_send(void) { return send(sv[0], "C", 1, MSG_DONTWAIT | MSG_NOSIGNAL); }

static long getfd_self(void) {
  long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
  if (pidfd < 0) return pidfd;
  long fd = syscall(SYS_pidfd_getfd, pidfd, 0, 0);
  close((int)pidfd);
  return fd;
}

static long sockopt(int family, int type, long level, long name, const void *value, long len) {
  int fd = socket(family, type, 0);
  if (fd < 0) return -1;
  long rc = syscall(SYS_setsockopt, fd, level, name, value, len);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

static long ldt_read(void) { static char buf[16]; return syscall(SYS_modify_ldt, 0, buf, sizeof buf); }
static long secret(void) { long fd = syscall(SYS_memfd_secret, 0); if (fd >= 0) close((int)fd); return fd; }

#define S(name, expr) printf("%s\t%s\n", name, errname(expr))

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "all";
  if (!getenv("AGENT_SANDBOX_SESSION")) {
    fprintf(stderr, "surface_probe: refusing to run outside a session (AGENT_SANDBOX_SESSION unset)\n");
    return 2;
  }
  setvbuf(stdout, 0, _IOLBF, 0);
  if (strcmp(mode, "i386") == 0) { printf("i386_self\t%s\n", errname(getpid32())); return 0; }
  printf("i386_getpid\t%s\n", in_child(getpid32));
  printf("x32_getpid\t%s\n", in_child(x32_getpid));
  S("inet_tcp", sock(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 6));
  S("inet_udp", sock(AF_INET, SOCK_DGRAM, 17));
  S("inet6_tcp", sock(AF_INET6, SOCK_STREAM, 0));
  S("inet6_udp", sock(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  S("inet_icmp", sock(AF_INET, SOCK_DGRAM, 1));
  S("inet_mptcp", sock(AF_INET, SOCK_STREAM, 262));
  S("inet6_mptcp", sock(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 262));
  S("inet_udplite", sock(AF_INET, SOCK_DGRAM, 136));
  S("inet_tcp_high_bits", sock(AF_INET, SOCK_STREAM, 0x100000006L));
  S("inet_sock_packet", sock(AF_INET, SOCK_PACKET, 0x300));
  S("inet_raw", sock(AF_INET, SOCK_RAW, 1));
  S("inet_seqpacket_sctp", sock(AF_INET, SOCK_SEQPACKET, 132));
  S("socketpair_unix", pair(AF_UNIX, SOCK_STREAM));
  S("socketpair_netlink", pair(AF_NETLINK, SOCK_RAW));
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  S("send_plain", plain_send());
  S("send_oob", oob_send());
  S("sendmsg_oob", oob_sendmsg());
  S("recv_oob", oob_recv());
  int one = 1, espinudp = 2;
  S("setsockopt_nodelay", sockopt(AF_INET, SOCK_STREAM, 6, 1, &one, sizeof one));
  S("setsockopt_reuseaddr", sockopt(AF_INET6, SOCK_DGRAM, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
  S("setsockopt_tcp_ulp", sockopt(AF_INET, SOCK_STREAM, 6, 31, "tls", 4));
  S("setsockopt_udp_encap", sockopt(AF_INET, SOCK_DGRAM, 17, 100, &espinudp, sizeof espinudp));
  S("setsockopt_udp_encap_high_bits", sockopt(AF_INET, SOCK_DGRAM, 0x100000011L, 100, &espinudp, sizeof espinudp));
  S("modify_ldt", ldt_read());
  S("memfd_secret", secret());
  S("pidfd_getfd", getfd_self());
  return 0;
}
