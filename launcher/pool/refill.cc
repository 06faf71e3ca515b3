#include "launcher/pool/refill.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
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

// One fork the launcher does not wait for, then execv of this program (the launcher execs nothing
// else: test_callers.NoHostExecInTheLauncher): the refill runs in a session of its own with stdio on
// /dev/null, no other fd, every signal's action the default and none blocked, and only the variables
// it reads; once this launcher exits it is init's. The child makes only async-signal-safe calls (the
// launcher has threads); what it needs is made before the fork. (The double fork before cost the
// caller 10-25 ms, waiting for the middle process: docs/BENCHMARKS.md.)
void spawn_refill(const std::string& program) {
  std::fflush(nullptr);
  std::vector<std::string> env = refill_environment();
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  const char* argv[] = {program.c_str(), "pool", "fill", nullptr};
  if (::fork() != 0) return;  // the launcher (or a fork that failed: gc and the next fill make up)
  ::setsid();
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // EINVAL for KILL, STOP
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
  ::close_range(3, ~0U, 0);
  environ = envp.data();
  ::execv("/proc/self/exe", const_cast<char* const*>(argv));
  ::_exit(127);
}

}  // namespace asbx
