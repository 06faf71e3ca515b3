/* An idmapped bind, made the way a root launcher would make one for a session in a user namespace
 * (tests/integration/test_userns.py, docs/DECISIONS.md "issue 34"): a clone of SOURCE's mount tree
 * at TARGET whose on-disk id ID is seen as kernel id HOST_ID (uids and gids), every other id unmapped.
 *   idmap_bind SOURCE TARGET ID HOST_ID
 * A user namespace holding the map is made by a child that only waits; its fd outlives the child. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

static int wait_forever(void* unused) {
  (void)unused;
  for (;;) pause();
  return 0;
}

static void put(pid_t pid, const char* file, const char* text) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
    perror(path);
    exit(1);
  }
  close(fd);
}

int main(int argc, char** argv) {
  static char stack[64 * 1024];
  if (argc != 5) {
    fprintf(stderr, "usage: idmap_bind SOURCE TARGET ID HOST_ID\n");
    return 2;
  }
  pid_t pid = clone(wait_forever, stack + sizeof stack, CLONE_NEWUSER | SIGCHLD, NULL);
  if (pid < 0) return perror("clone"), 1;
  char map[64], ns_path[64];
  snprintf(map, sizeof map, "%s %s 1\n", argv[3], argv[4]);
  put(pid, "setgroups", "deny\n");
  put(pid, "uid_map", map);
  put(pid, "gid_map", map);
  snprintf(ns_path, sizeof ns_path, "/proc/%d/ns/user", pid);
  int ns = open(ns_path, O_RDONLY | O_CLOEXEC);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  if (ns < 0) return perror(ns_path), 1;
  int tree = open_tree(AT_FDCWD, argv[1], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0) return perror("open_tree"), 1;
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (unsigned)ns};
  if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) return perror("mount_setattr"), 1;
  if (move_mount(tree, "", AT_FDCWD, argv[2], MOVE_MOUNT_F_EMPTY_PATH) != 0) return perror("move_mount"), 1;
  return 0;
}
