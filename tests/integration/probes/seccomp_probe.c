/* The kernel surface a session reaches, one line per call: NAME<TAB>ok | ERRNO-NAME.
   Built static on the host (tests/integration/test_seccomp.py) and run inside real sessions:
   under the project's profile each refused call answers its errno; under podman's default
   (the control) the nested user namespace and what it opens succeed.
   Usage: seccomp_probe [all | flood N | one NAME] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#define NETLINK_ROUTE 0
#define NETLINK_NETFILTER 12

static const char *result(long rc) {
  static char buf[64];
  if (rc >= 0) return "ok";
  const char *name = strerrorname_np(errno);
  snprintf(buf, sizeof buf, "%s", name ? name : "E?");
  return buf;
}

static long sock(int family, int type, int proto) {
  int fd = socket(family, type, proto);
  if (fd >= 0) close(fd);
  return fd;
}

static long clone_flags(unsigned long flags) {
  long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, 0, 0);
  return pid;
}

static long clone3_plain(void) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, 0, 0);
  return pid;
}

static void *thread_body(void *arg) { return arg; }
static long thread_start(void) {
  pthread_t t;
  int rc = pthread_create(&t, 0, thread_body, 0);
  if (rc != 0) { errno = rc; return -1; }
  pthread_join(t, 0);
  return 0;
}

static long vm_read(void) {
  char src[8] = "probe", dst[8];
  struct iovec l = {dst, sizeof dst}, r = {src, sizeof src};
  return syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0);
}

static long ptrace_me(void) {
  long pid = fork();
  if (pid == 0) _exit(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0 ? 0 : errno);
  int status = 0;
  waitpid(pid, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (code == 0) return 0;
  errno = code;
  return -1;
}

/* In a child: a user+net+mount namespace of its own, then what it opens (one line each). */
static void nested(void) {
  fflush(stdout);
  long pid = fork();
  if (pid == 0) {
    long rc = unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS);
    printf("unshare_user_net_mnt\t%s\n", result(rc));
    if (rc == 0) {
      printf("nested_mount_tmpfs\t%s\n", result(mount("none", "/tmp", "tmpfs", 0, "")));
      long fs = syscall(SYS_fsopen, "tmpfs", 0);
      printf("nested_fsopen\t%s\n", result(fs));
      printf("nested_open_tree_clone\t%s\n", result(syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */)));
      printf("nested_socket_packet\t%s\n", result(sock(AF_PACKET, SOCK_RAW, 0)));
      printf("nested_socket_netlink_netfilter\t%s\n", result(sock(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER)));
    }
    fflush(stdout);
    _exit(0);
  }
  waitpid(pid, 0, 0);
}

struct probe {
  const char *name;
  long (*run)(void);
};

#define P(name, expr) static long p_##name(void) { return (expr); }
P(clone_newuser, clone_flags(CLONE_NEWUSER))
P(clone_newnet, clone_flags(CLONE_NEWNET))
P(clone3, clone3_plain())
P(fork, clone_flags(0))
P(thread, thread_start())
P(setns, syscall(SYS_setns, open("/proc/self/ns/uts", O_RDONLY), 0))
P(mount, mount("none", "/tmp", "tmpfs", 0, ""))
P(umount2, umount2("/tmp", MNT_DETACH))
P(pivot_root, syscall(SYS_pivot_root, ".", "."))
P(fsopen, syscall(SYS_fsopen, "tmpfs", 0))
P(fsconfig, syscall(SYS_fsconfig, -1, 0, 0, 0, 0))
P(fsmount, syscall(SYS_fsmount, -1, 0, 0))
P(fspick, syscall(SYS_fspick, AT_FDCWD, "/", 0))
P(open_tree, syscall(SYS_open_tree, AT_FDCWD, "/", 0))
P(move_mount, syscall(SYS_move_mount, -1, "", -1, "", 0))
P(mount_setattr, syscall(SYS_mount_setattr, -1, "", 0, 0, 0))
P(keyctl, syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0))
P(add_key, syscall(SYS_add_key, "user", "asbx-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING))
P(request_key, syscall(SYS_request_key, "user", "asbx-probe", 0, 0))
P(socket_unix, sock(AF_UNIX, SOCK_STREAM, 0))
P(socket_inet, sock(AF_INET, SOCK_STREAM, 0))
P(socket_inet6, sock(AF_INET6, SOCK_DGRAM, 0))
P(socket_netlink_route, sock(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE))
P(socket_netlink_netfilter, sock(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER))
P(socket_packet, sock(AF_PACKET, SOCK_RAW, 0))
P(socket_alg, sock(AF_ALG, SOCK_SEQPACKET, 0))
P(socket_vsock, sock(AF_VSOCK, SOCK_STREAM, 0))
P(socket_high_bits, syscall(SYS_socket, 0x100000026L, SOCK_SEQPACKET, 0))
P(ptrace_traceme, ptrace_me())
P(process_vm_readv, vm_read())
P(personality_query, personality(0xffffffff))
P(personality_linux32, personality(PER_LINUX32))
P(personality_no_aslr, personality(ADDR_NO_RANDOMIZE))
P(syslog, syscall(SYS_syslog, 10, 0, 0))
P(io_uring_setup, syscall(SYS_io_uring_setup, 1, 0))
P(bpf, syscall(SYS_bpf, 0, 0, 0))
P(userfaultfd, syscall(SYS_userfaultfd, 0))

static const struct probe probes[] = {
#define E(name) {#name, p_##name},
    E(clone_newuser) E(clone_newnet) E(clone3) E(fork) E(thread) E(setns) E(mount) E(umount2) E(pivot_root)
    E(fsopen) E(fsconfig) E(fsmount) E(fspick) E(open_tree) E(move_mount) E(mount_setattr) E(keyctl) E(add_key)
    E(request_key) E(socket_unix) E(socket_inet) E(socket_inet6) E(socket_netlink_route) E(socket_netlink_netfilter)
    E(socket_packet) E(socket_alg) E(socket_vsock) E(socket_high_bits) E(ptrace_traceme) E(process_vm_readv)
    E(personality_query) E(personality_linux32) E(personality_no_aslr) E(syslog) E(io_uring_setup) E(bpf)
    E(userfaultfd)
};

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "all";
  if (!getenv("AGENT_SANDBOX_SESSION")) { /* it mounts and unshares: never on a host */
    fprintf(stderr, "seccomp_probe: refusing to run outside a session (AGENT_SANDBOX_SESSION unset)\n");
    return 2;
  }
  if (strcmp(mode, "flood") == 0) { /* a refused call, N times, as fast as it goes */
    long n = argc > 2 ? atol(argv[2]) : 1000000, refused = 0;
    for (long i = 0; i < n; ++i) refused += syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) < 0;
    printf("flood\t%ld refused of %ld\n", refused, n);
    return 0;
  }
  if (strcmp(mode, "loop") == 0) { /* allowed calls only: the cost of the filter itself */
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; ++i) syscall(SYS_getppid);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("loop\t%.1f ns per call\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
  }
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; ++i) {
    if (strcmp(mode, "one") == 0 && (argc < 3 || strcmp(argv[2], probes[i].name) != 0)) continue;
    long rc = probes[i].run();
    printf("%s\t%s\n", probes[i].name, result(rc));
    fflush(stdout);
  }
  if (strcmp(mode, "all") == 0) nested();
  return 0;
}
