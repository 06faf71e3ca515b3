/* The kernel keyring, as the host user and as an agent meet it (tests/integration/test_userns.py).
 * Raw syscalls: no libkeyutils, built static so it runs in the image unchanged.
 *   keyring host-add NAME VALUE   (as the host user) a "user" key in its user keyring; prints
 *                                 "key=SERIAL user_keyring=SERIAL"
 *   keyring host-read NAME        (as the host user) prints the key's value
 *   keyring host-remove NAME      (as the host user) unlinks the key from its user keyring
 *   keyring probe NAME [SERIAL]   (the agent) one line per try: "STEP ok|errno-name [detail]";
 *                                 SERIAL: the host user keyring's serial, as if the agent guessed it */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_SESSION_KEYRING -3
#define KEY_SPEC_USER_KEYRING -4
#define KEYCTL_GET_KEYRING_ID 0
#define KEYCTL_JOIN_SESSION_KEYRING 1
#define KEYCTL_UPDATE 2
#define KEYCTL_UNLINK 9
#define KEYCTL_LINK 8
#define KEYCTL_SEARCH 10
#define KEYCTL_READ 11

static long keyctl(long op, long a, long b, long c, long d) { return syscall(SYS_keyctl, op, a, b, c, d); }

static int fail(const char* what) {
  fprintf(stderr, "keyring: %s: %s\n", what, strerror(errno));
  return 1;
}

/* pam_keyinit's way: a fresh session keyring holding the user keyring, so its keys are possessed. */
static int host_session(void) {
  if (keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) < 0) return fail("join session keyring");
  if (keyctl(KEYCTL_LINK, KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING, 0, 0) < 0) return fail("link user keyring");
  return 0;
}

static void report(const char* step, long r, const char* detail) {
  if (r < 0) printf("%s %s\n", step, strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
  else printf("%s ok%s%s\n", step, detail ? " " : "", detail ? detail : "");
}

/* Search from `from`, then read the value and overwrite it: each step on its own line. */
static void reach(const char* how, long from, const char* name) {
  char step[64], buf[256] = {0};
  snprintf(step, sizeof step, "%s-search", how);
  long id = keyctl(KEYCTL_SEARCH, from, (long)"user", (long)name, 0);
  report(step, id, NULL);
  if (id < 0) return;
  snprintf(step, sizeof step, "%s-read", how);
  long n = keyctl(KEYCTL_READ, id, (long)buf, sizeof buf - 1, 0);
  report(step, n, n >= 0 ? buf : NULL);
  snprintf(step, sizeof step, "%s-update", how);
  report(step, keyctl(KEYCTL_UPDATE, id, (long)"agent-wrote-this", 16, 0), NULL);
}

int main(int argc, char** argv) {
  if (argc >= 4 && !strcmp(argv[1], "host-add")) {
    if (host_session()) return 1;
    long key = syscall(SYS_add_key, "user", argv[2], argv[3], strlen(argv[3]), KEY_SPEC_USER_KEYRING);
    if (key < 0) return fail("add_key");
    printf("key=%ld user_keyring=%ld\n", key, keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0, 0, 0));
    return 0;
  }
  if (argc >= 3 && (!strcmp(argv[1], "host-read") || !strcmp(argv[1], "host-remove"))) {
    if (host_session()) return 1;
    long id = keyctl(KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, (long)"user", (long)argv[2], 0);
    if (id < 0) return fail("search");
    if (!strcmp(argv[1], "host-remove"))
      return keyctl(KEYCTL_UNLINK, id, KEY_SPEC_USER_KEYRING, 0, 0) < 0 ? fail("unlink") : 0;
    char buf[256] = {0};
    if (keyctl(KEYCTL_READ, id, (long)buf, sizeof buf - 1, 0) < 0) return fail("read");
    printf("%s\n", buf);
    return 0;
  }
  if (argc >= 3 && !strcmp(argv[1], "probe")) {
    char uid_map[256] = {0};
    FILE* f = fopen("/proc/self/uid_map", "r");
    if (f) {
      size_t n = fread(uid_map, 1, sizeof uid_map - 1, f);
      fclose(f);
      for (size_t i = 0; i < n; ++i)
        if (uid_map[i] == '\n') uid_map[i] = ';';
    }
    printf("uid_map %s\n", uid_map);
    reach("user", KEY_SPEC_USER_KEYRING, argv[2]);
    report("link-user", keyctl(KEYCTL_LINK, KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING, 0, 0), NULL);
    reach("session", KEY_SPEC_SESSION_KEYRING, argv[2]);
    if (argc >= 4) {
      long serial = strtol(argv[3], NULL, 10);
      report("link-serial", keyctl(KEYCTL_LINK, serial, KEY_SPEC_SESSION_KEYRING, 0, 0), NULL);
      reach("serial", KEY_SPEC_SESSION_KEYRING, argv[2]);
    }
    return 0;
  }
  fprintf(stderr, "usage: keyring host-add NAME VALUE | host-read NAME | host-remove NAME | probe NAME [SERIAL]\n");
  return 2;
}
