#include "launcher/podman/deferred_removal.h"

#include <cerrno>
#include <csignal>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/late_close.h"
#include "launcher/podman/podman_api.h"

extern char** environ;

namespace asbx {
namespace {

int thread_count() {
  DIR* d = ::opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

// The marker is written whole under a temporary name and renamed: gc never reads half of it.
bool write_marker(const std::string& path, long pid) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::string text = std::to_string(pid) + " " + std::to_string(static_cast<long long>(std::time(nullptr))) + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0) return true;
  ::unlink(tmp.c_str());
  return false;
}

// The forked child: async-signal-safe calls only (ARGV was made before the fork), then this program
// again (kRemoverVerb): a fork that lived on would share every page of the launcher copy-on-write,
// and each page the launcher wrote on its way out was copied (docs/BENCHMARKS.md, stop 55).
[[noreturn]] void remover(int go, int ready, char* const* argv, const LateFds& late) {
  ::setsid();  // signals are blocked until here: a hangup of the caller's terminal never reaches it
  ::close(ready);  // the launcher may exit now
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
  if (go != 3) ::dup2(go, 3);  // the copy is without O_CLOEXEC
  else ::fcntl(3, F_SETFD, 0);
  // Not the caller's pipes, not the slot lock: only `go` stays open, and the fds whose close waits
  // for the kernel (late_close.h) until the launcher has dropped its copies. No variable of the caller's.
  close_from_4_but(late);
  for (char c;;) {  // EOF: the launcher let go (run_deferred_remover's read sees the same EOF)
    ssize_t n = ::read(3, &c, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  for (int i = 0; i < late.n; ++i) ::close(late.fd[i]);  // the last copies: the kernel's wait is ours
  static char* no_variables[] = {nullptr};
  environ = no_variables;
  ::execv("/proc/self/exe", argv);
  ::_exit(127);  // the marker names a process that is gone: gc removes the container
}

}  // namespace

int run_deferred_remover(const std::string& socket, const std::string& id, const std::string& marker) {
  if (id.empty() || id.find('/') != std::string::npos || marker.size() < id.size() + 9 ||
      marker.compare(marker.size() - id.size() - 9, std::string::npos, ".removal-" + id) != 0)
    throw Error(ErrorKind::usage, std::string(kRemoverVerb) + ": '" + marker + "' is not the removal marker of container '" +
                                      id + "'; nothing was removed");
  char c;
  while (::read(3, &c, 1) > 0) {
  }  // the launcher has written the marker (or is gone)
  ::close(3);
  bool removed = false;
  for (int attempt = 0; attempt < 4 && !removed; ++attempt) {  // a busy service: 0, 0.5, 1, 2 s
    if (attempt) ::usleep(250'000u << attempt);
    try {
      PodmanApi api(socket);
      removed = api.remove(id);
    } catch (...) {
    }
  }
  if (removed) ::unlink(marker.c_str());  // failed: the marker stays for gc, which removes it
  return removed ? 0 : 1;
}

std::string removal_marker_path(const std::string& runtime_dir, const std::string& container_id) {
  return runtime_dir + "/.removal-" + container_id;
}

RemovalMarker parse_removal_marker(const std::string& text) {
  RemovalMarker m;
  std::size_t sp = text.find(' ');
  if (sp == std::string::npos || text.size() > 40 || text.back() != '\n') return m;
  std::string a = text.substr(0, sp), b = text.substr(sp + 1, text.size() - sp - 2);
  auto digits = [](const std::string& s) { return !s.empty() && s.size() <= 12 && s.find_first_not_of("0123456789") == std::string::npos; };
  if (!digits(a) || !digits(b)) return m;
  m.pid = std::stol(a);
  m.started_unix = std::stoll(b);
  m.present = m.pid > 0;
  return m;
}

RemovalMarker read_removal_marker(const std::string& runtime_dir, const std::string& container_id) {
  if (runtime_dir.empty() || container_id.find('/') != std::string::npos) return {};
  std::ifstream in(removal_marker_path(runtime_dir, container_id));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return parse_removal_marker(text);
}

bool hand_off_removal(const std::string& socket, const std::string& runtime_dir, const std::string& container_id) {
  if (runtime_dir.empty() || container_id.empty() || thread_count() != 1) return false;
  if (::mkdir(runtime_dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  std::string marker = removal_marker_path(runtime_dir, container_id);
  std::string verb = kRemoverVerb, program = "agent-sandbox";
  std::string args[] = {program, verb, socket, container_id, marker};
  char* const argv[] = {args[0].data(), args[1].data(), args[2].data(), args[3].data(), args[4].data(), nullptr};
  LateFds late = late_fds();
  int p[2], r[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  if (::pipe2(r, O_CLOEXEC) != 0) {
    ::close(p[0]);
    ::close(p[1]);
    return false;
  }
  sigset_t all, old;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[1]);
    ::close(r[0]);
    remover(p[0], r[1], argv, late);
  }
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(p[0]);
  ::close(r[1]);
  if (pid < 0) {
    ::close(p[1]);
    ::close(r[0]);
    return false;
  }
  drop_late_fds();  // the remover holds them: these closes are not the last
  char c;
  while (::read(r[0], &c, 1) < 0 && errno == EINTR) {
  }  // EOF: the remover has its own session
  ::close(r[0]);
  write_marker(marker, pid);  // unwritten (full disk): gc still removes the container, with an orphan line
  ::close(p[1]);               // go
  return true;
}

}  // namespace asbx
