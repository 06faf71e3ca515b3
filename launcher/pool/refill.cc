#include "launcher/pool/refill.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace asbx {
namespace {

// What `pool fill` reads of its environment (where the seat config, state and runtime dir are) and
// nothing else: the caller's other variables — a token it exported, say — would live on in every
// member's keeper (found by a hostile pass, stop 53).
std::vector<std::string> refill_environment() {
  static const char* const kKept[] = {"HOME", "PATH", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ",
                                      "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"};
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e)
    for (const char* name : kKept)
      if (std::strncmp(*e, name, std::strlen(name)) == 0 && (*e)[std::strlen(name)] == '=') out.emplace_back(*e);
  return out;
}

}  // namespace

// One posix_spawn (no copy of this process's page tables, nothing to wait for): the refill runs in a
// session of its own with stdio on /dev/null, no other fd, every signal default and unblocked, only
// the variables it reads; once this launcher exits it is init's. (A double fork cost the caller 10-25 ms: docs/BENCHMARKS.md.)
void spawn_refill(const std::string& program) {
  std::fflush(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  if (::posix_spawn_file_actions_init(&files) != 0) return;
  if (::posix_spawnattr_init(&attr) != 0) {
    ::posix_spawn_file_actions_destroy(&files);
    return;
  }
  for (int fd = 0; fd < 3; ++fd) ::posix_spawn_file_actions_addopen(&files, fd, "/dev/null", O_RDWR, 0);
  ::posix_spawn_file_actions_addclosefrom_np(&files, 3);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const char* argv[] = {program.c_str(), "pool", "fill", nullptr};
  std::vector<std::string> env = refill_environment();
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  pid_t child = -1;
  ::posix_spawn(&child, "/proc/self/exe", &files, &attr, const_cast<char* const*>(argv), envp.data());
  ::posix_spawnattr_destroy(&attr);
  ::posix_spawn_file_actions_destroy(&files);
}

}  // namespace asbx
