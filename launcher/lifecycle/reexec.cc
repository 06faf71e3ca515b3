#include "launcher/lifecycle/reexec.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/config.h"
#include "base/error.h"
#include "base/fdio.h"
#include "base/request.h"
#include "preflight/spawn.h"
#include "preflight/systemd_run.h"

extern char** environ;

namespace asbx {
namespace {

// Filled once by preflight_or_reexec() for the status record.
struct Seen {
  bool measured = false;
  bool no_new_privs = false;
  std::string reexec_unit;  // set in the re-exec'd launcher
} g_seen;

std::string read_text(const std::string& path) { return read_text_file(path).value_or(""); }

bool is_socket(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::vector<std::string> environ_list() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The re-exec'd launcher says it started by writing to the marker its parent made. Only a
// regular file under this user's runtime dir, and never created here.
bool announce_started(const std::string& marker, unsigned uid) {
  if (marker.rfind(expected_runtime_dir(uid) + "/asbx-reexec-", 0) != 0) return false;
  int fd = ::open(marker.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write_all(fd, "started\n");
  ::close(fd);
  return ok;
}

std::string make_marker(unsigned uid) {
  std::string path = expected_runtime_dir(uid) + "/asbx-reexec-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) throw Error(ErrorKind::internal, "cannot create the re-exec marker in " + expected_runtime_dir(uid) +
                                                   ": " + std::strerror(errno));
  ::close(fd);
  return path;
}

std::string nonce() {
  std::random_device rd;
  static const char hex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 8; ++i) s += hex[rd() % 16];
  return s;
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error(ErrorKind::internal, std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  return std::string(buf, n);
}

// Delivers SIG to the re-exec'd launcher only: it stops its container and exits, and the
// unit ends with it (--collect removes it even when it failed).
void forward_to_unit(const std::string& unit, int sig) {
  systemctl_user({"kill", "--kill-who=main", "--signal=" + std::to_string(sig), unit + ".service"}, true);
}

// Waits for systemd-run while forwarding INT/TERM/HUP to the unit.
int supervise(pid_t child, const std::string& unit, const sigset_t& waited) {
  for (;;) {
    int sig = ::sigwaitinfo(&waited, nullptr);
    if (sig < 0 && errno != EINTR) throw Error(ErrorKind::internal, std::string("sigwaitinfo: ") + std::strerror(errno));
    if (sig > 0 && sig != SIGCHLD) forward_to_unit(unit, sig);
    int status = 0;
    pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) return wait_status_code(status);
  }
}

int run_reexec(const ReexecSpec& spec) {
  sigset_t waited, old;
  sigemptyset(&waited);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&waited, s);
  ::sigprocmask(SIG_BLOCK, &waited, &old);
  int code;
  try {
    pid_t child = spawn_helper(systemd_run_argv(spec), old, true, false);
    code = supervise(child, spec.unit, waited);
  } catch (...) {
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  return code;
}

}  // namespace

PreflightFacts current_preflight_facts() {
  PreflightFacts f;
  f.no_new_privs = parse_no_new_privs(read_text("/proc/self/status")) == 1;
  UserFacts user = current_user_facts();
  f.uid = user.uid;
  f.user = user.name;
  struct stat st{};
  f.linger = !user.name.empty() && ::stat(("/var/lib/systemd/linger/" + user.name).c_str(), &st) == 0;
  f.xdg_runtime_dir = user.xdg_runtime_dir;
  f.bus_socket = is_socket(expected_runtime_dir(user.uid) + "/bus");
  f.reexecd = std::getenv(kReexecMarkerEnv) != nullptr;
  return f;
}

int systemctl_user(const std::vector<std::string>& args, bool quiet) {
  std::vector<std::string> argv = {kSystemctl, "--user"};
  argv.insert(argv.end(), args.begin(), args.end());
  sigset_t child_mask;
  sigemptyset(&child_mask);
  pid_t pid = spawn_helper(argv, child_mask, false, quiet);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return wait_status_code(status);
}

std::optional<int> preflight_or_reexec(const std::vector<std::string>& args, const std::string& session_id) {
  PreflightFacts facts = current_preflight_facts();
  g_seen.measured = true;
  g_seen.no_new_privs = facts.no_new_privs;
  if (facts.reexecd) {
    announce_started(std::getenv(kReexecMarkerEnv), facts.uid);
    g_seen.reexec_unit = env_or(kReexecUnitEnv, "?");
    ::unsetenv(kReexecMarkerEnv);
    ::unsetenv(kReexecUnitEnv);
  }
  if (decide_preflight(facts) == PreflightAction::run_here) return std::nullopt;
  check_reexec_args(args);
  if (!session_id.empty()) validate_session_id(session_id);
  ReexecSpec spec;
  spec.unit = reexec_unit_name(session_id, ::getpid(), nonce());
  spec.exe = self_exe();
  spec.args = args;
  spec.path = env_or("PATH", "/usr/local/bin:/usr/bin:/bin");
  spec.home = current_user_facts().home;
  spec.pass_env = reexec_env_names(environ_list());
  spec.marker = make_marker(facts.uid);
  int code = run_reexec(spec);
  bool started = !read_text(spec.marker).empty();
  ::unlink(spec.marker.c_str());
  if (!started)
    throw Error(ErrorKind::systemd_run_failed, "systemd-run --user could not start the transient unit " + spec.unit +
                                                   ".service (systemd-run exited " + std::to_string(code) + ")");
  return code;
}

void refuse_persist_reexec() {
  PreflightFacts facts = current_preflight_facts();
  if (facts.reexecd || decide_preflight(facts) == PreflightAction::run_here) return;
  throw Error(ErrorKind::seat_preflight,
              "--persist: this launcher runs with NoNewPrivs=1 and would be re-exec'd in a transient unit, which ends "
              "with this terminal and would take the session along; start a persistent session from a terminal "
              "without NoNewPrivs (an ssh login or a desktop terminal)");
}

nlohmann::json preflight_record() {
  if (!g_seen.measured) return nullptr;
  return {{"no_new_privs", g_seen.no_new_privs ? 1 : 0},
          {"reexecd", !g_seen.reexec_unit.empty()},
          {"unit", g_seen.reexec_unit.empty() ? nlohmann::json(nullptr) : nlohmann::json(g_seen.reexec_unit + ".service")}};
}

}  // namespace asbx
