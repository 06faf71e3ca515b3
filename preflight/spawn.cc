#include "preflight/spawn.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"

namespace asbx {

pid_t spawn_helper(const std::vector<std::string>& argv, const sigset_t& child_mask, bool own_group, bool quiet) {
  if (argv.empty() || (argv[0] != kSystemdRun && argv[0] != kSystemctl))
    throw Error(ErrorKind::internal, "refusing to run '" + (argv.empty() ? "" : argv[0]) +
                                         "': the launcher starts only systemd-run and systemctl");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw Error(ErrorKind::internal, std::string("fork: ") + std::strerror(errno));
  if (pid > 0) return pid;
  if (own_group) ::setpgid(0, 0);  // a terminal's ^C reaches only the launcher, which forwards it
  if (quiet) {
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 1), ::dup2(null, 2);
  }
  ::sigprocmask(SIG_SETMASK, &child_mask, nullptr);
  ::execv(cargv[0], cargv.data());
  _exit(127);
}

void exec_host_git(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] != kHostGit)
    throw Error(ErrorKind::internal, "refusing to run '" + (argv.empty() ? "" : argv[0]) +
                                         "': agent-sandbox git runs only " + kHostGit);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  ::execv(cargv[0], cargv.data());
}

int wait_status_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace asbx
