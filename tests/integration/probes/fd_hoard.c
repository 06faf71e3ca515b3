/* The disk wall's open-files count under a hostile session (test_disk_holes.ManyOpenFiles):
 * hold thousands of fds in hundreds of threads, so that reading every thread's fd table is slow,
 * then write MiB megabytes into a file at AT seconds, delete it and exit 0.
 * usage: fd_hoard THREADS AT MIB PATH */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void *sleeper(void *arg) {
  (void)arg;
  for (;;) pause();
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  double t0 = now(), at = atof(argv[2]);
  int threads = atoi(argv[1]), p[2];
  long mib = atol(argv[3]);
  if (pipe(p) != 0) return 3;
  while (dup(p[0]) >= 0) {
  }
  for (int fd = 8000; fd < 8010; ++fd) close(fd);  /* room for the file */
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 65536);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    pthread_create(&t, &a, sleeper, 0);
  }
  while (now() - t0 < at) usleep(10000);
  int fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 4;
  static char buf[1 << 20];
  memset(buf, 'x', sizeof buf);
  for (long i = 0; i < mib; ++i)
    if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) break;
  fsync(fd);
  close(fd);
  unlink(argv[4]);
  return 0;
}
