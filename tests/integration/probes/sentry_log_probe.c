/* What a hostile pass tried against the gVisor recorder (tests/integration/test_gvisor_record.py).
   Usage: sentry_log_probe own-filter | x32
   own-filter: the agent's own seccomp filter refuses socket() (EPERM); three socket(AF_INET) the
               profile allows, then keyctl (the profile refuses it whatever its arguments).
   x32:        unshare and keyctl by their x32 numbers (bit 30), which the sentry does not run. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

static int x32(void) {
  report("x32_unshare", syscall(0x40000000L | SYS_unshare, 0x10000000L));
  report("x32_keyctl", syscall(0x40000000L | SYS_keyctl, 0, -4, 0));
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "own-filter") == 0) return own_filter();
  if (argc > 1 && strcmp(argv[1], "x32") == 0) return x32();
  fprintf(stderr, "usage: sentry_log_probe own-filter | x32\n");
  return 2;
}
