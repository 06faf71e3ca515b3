/* What a hostile pass tried against the gVisor recorder (tests/integration/test_gvisor_record.py).
   Usage: sentry_log_probe own-filter | own-kill | x32 | high-bits
   own-filter: the agent's own seccomp filter refuses socket() (EPERM); three socket(AF_INET) the
               profile allows, then keyctl (the profile refuses it whatever its arguments).
   own-kill:   a child whose own filter answers keyctl with KILL_PROCESS calls keyctl (it dies).
   x32:        unshare and keyctl by their x32 numbers (bit 30), which the sentry does not run.
   high-bits:  keyctl with bits 32-63 set in its number (the sentry filters the low 32), then a
               pause and "after" (a kill-mode session never prints it). */
#include <errno.h>
#include <signal.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *name, long r) {
  printf("%s\t%s\n", name, r < 0 ? strerror(errno) : "ok");
  fflush(stdout);
}

static int own_filter(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof f / sizeof f[0], f};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return report("own_filter", -1), 1;
  for (int i = 0; i < 3; i++) report("socket_inet", socket(AF_INET, SOCK_STREAM, 0));
  report("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -4, 0));
  return 0;
}

static int own_kill(void) {
  pid_t child = fork();
  if (child == 0) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) _exit(3);
    syscall(SYS_keyctl, 0, -4, 0);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("own_kill\t%s\n", WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS ? "SIGSYS" : "survived");
  return 0;
}

static int high_bits(void) {
  report("high_bits_keyctl", syscall((1L << 32) | SYS_keyctl, 0, -4, 0));
  sleep(30);
  printf("after\n");
  return 0;
}

static int x32(void) {
  report("x32_unshare", syscall(0x40000000L | SYS_unshare, 0x10000000L));
  report("x32_keyctl", syscall(0x40000000L | SYS_keyctl, 0, -4, 0));
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "own-filter") == 0) return own_filter();
  if (argc > 1 && strcmp(argv[1], "own-kill") == 0) return own_kill();
  if (argc > 1 && strcmp(argv[1], "x32") == 0) return x32();
  if (argc > 1 && strcmp(argv[1], "high-bits") == 0) return high_bits();
  fprintf(stderr, "usage: sentry_log_probe own-filter | own-kill | x32 | high-bits\n");
  return 2;
}
