#include "launcher/persist/persist.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/session_owner.h"
#include "launcher/lifecycle/status.h"
#include "launcher/lifecycle/terminal.h"
#include "launcher/persist/channel.h"
#include "launcher/persist/client.h"
#include "launcher/persist/server.h"
#include "launcher/lifecycle/session_dir.h"
#include "launcher/podman/gc.h"
#include "persist/keys.h"

namespace asbx {
namespace {

// The dir's owner (this launcher, until the supervisor names itself): gc removes a dir whose owner
// is gone and that no container leads to. Nothing half-made stays when it cannot be written.
void write_owner(const LaunchPlan& plan) {
  if (write_session_owner(plan.session_dir + "/owner", plan)) return;
  int err = errno;
  std::error_code ignored;
  std::filesystem::remove_all(plan.session_dir, ignored);
  throw Error(ErrorKind::internal, "cannot write " + plan.session_dir + "/owner: " + std::strerror(err) + "; nothing was started");
}

// What a killed launcher left in DIR: its tmpfs and stagings unmounted first (remove_all crosses
// mounts), then every entry, never following links. False when a mount stays.
bool clear_dir(const std::string& dir) {
  if (!unmount_seat_tmpfs(dir)) return false;
  std::error_code ignored;
  for (const auto& e : std::filesystem::directory_iterator(dir, ignored)) std::filesystem::remove_all(e.path(), ignored);
  return true;
}

// The session's own dir, taken here under its lock (launcher/lifecycle/session_dir.h): an id in use
// is refused (a persistent one's socket answers; a plain one's owner names a live launcher); a dir
// whose socket answers nothing and whose owner is gone was left by a launcher that was killed, and is cleared.
void claim_session_dir(const LaunchPlan& plan) {
  std::string parent = plan.session_dir.substr(0, plan.session_dir.rfind('/')), failed;
  if (!make_dirs(parent, &failed))
    throw Error(ErrorKind::internal, "cannot create " + failed + " for the session dir: " + std::strerror(errno));
  SessionDirLock lock;
  if (!lock.take(plan.session_dir))
    throw Error(ErrorKind::internal, "cannot create " + plan.session_dir + ": " + std::strerror(errno));
  if (lock.made()) return write_owner(plan);
  if (long holder = session_dir_holder(plan, current_host_facts().launcher_alive))  // a live plain session's
    throw Error(ErrorKind::usage, "--id " + plan.session_id + ": a session of that id is already running on this seat "
                                  "(its launcher is pid " + std::to_string(holder) + "); nothing was created");
  struct stat st{};
  int answer = connect_errno(plan.attach_socket);
  if (::lstat(plan.session_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() &&
      (answer == ECONNREFUSED || answer == ENOENT) && clear_dir(plan.session_dir))
    return write_owner(plan);
  throw Error(ErrorKind::usage, "--id " + plan.session_id + ": a session of that id is already running on this seat (" +
                                    plan.session_dir + ")");
}

void to_dev_null() {
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
  if (null > 2) ::close(null);
}

// The supervisor is the launcher gc judges: its pid and start on the labels.
void relabel(LaunchPlan& plan) {
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  plan.labels["agent-sandbox.launcher-pid"] = std::to_string(::getpid());
  plan.labels["agent-sandbox.started"] = std::to_string(now.count());
}

int supervise(const Request& req, const SeatConfig& seat, LaunchPlan plan, UniqueFd listener, int rows, int cols,
              const LocalOptions& opts) {
  to_dev_null();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_IGN);  // until the session's own handlers
  relabel(plan);
  SessionEnd end;
  auto failed = [&](const Error& e) {  // no session ran: say so where the records go
    if (!req.status_file.empty()) write_status_file(req.status_file, early_failure_record(plan.session_id, e));
    end.exit_code = e.exit_code();
  };
  try {
    if (!replace_session_owner(plan.session_dir, plan))  // gc may have taken the dir of a killed caller
      throw Error(ErrorKind::internal, "cannot name the supervisor in " + plan.session_dir + "/owner: " + std::strerror(errno));
    PtyPair pty = open_pty(rows, cols);
    AttachServer server(std::move(listener), pty.master.get(), ::getuid());
    server.start();
    end = run_planned(req, seat, plan, StdioFds{pty.slave.get(), pty.slave.get(), pty.slave.get()}, opts);
    ::unlink(plan.attach_socket.c_str());  // from here a new attach hears "no such session"
    server.finish(end.exit_code, end.lines);
  } catch (const Error& e) {
    failed(e);
  } catch (const std::exception& e) {
    failed(Error(ErrorKind::internal, std::string("the session's supervisor failed: ") + e.what()));
  }
  std::error_code ignored;
  std::filesystem::remove_all(plan.session_dir, ignored);
  return end.exit_code;
}

void say_how_to_detach(const LocalOptions& opts, const std::string& id) {
  std::fprintf(stderr, "%s: session %s is persistent: %s detaches, 'agent-sandbox attach %s' comes back\n",
               opts.program.c_str(), id.c_str(), kDetachKeysText, id.c_str());
  std::fflush(stderr);
}

}  // namespace

int run_persistent(const Request& req, const SeatConfig& seat, LaunchPlan plan, const LocalOptions& opts) {
  UniqueFd listener, first;
  bool claimed = false;
  try {
    claim_session_dir(plan);
    claimed = true;
    listener = listen_attach(plan.attach_socket);
    first = connect_attach(plan.attach_socket, plan.session_id);  // queued until the supervisor accepts it
  } catch (const Error& e) {
    std::error_code ignored;
    if (claimed) std::filesystem::remove_all(plan.session_dir, ignored);  // nothing half-made is left
    std::fprintf(stderr, "%s: %s\n", opts.program.c_str(), printable(e.what()).c_str());
    if (!req.status_file.empty()) write_status_file(req.status_file, early_failure_record(plan.session_id, e));
    return e.exit_code();
  }
  int rows = 24, cols = 80;
  window_size(0, rows, cols);
  say_how_to_detach(opts, plan.session_id);
  std::fflush(nullptr);
  pid_t middle = ::fork();
  if (middle == 0) {  // the middle child only starts the supervisor in a session of its own and goes
    ::setsid();
    pid_t supervisor = ::fork();
    if (supervisor != 0) ::_exit(supervisor < 0 ? 1 : 0);
    first = UniqueFd();
    return supervise(req, seat, std::move(plan), std::move(listener), rows, cols, opts);
  }
  listener = UniqueFd();
  if (middle < 0) {
    std::error_code ignored;
    std::filesystem::remove_all(plan.session_dir, ignored);
  }
  int status = 0;
  while (middle > 0 && ::waitpid(middle, &status, 0) < 0 && errno == EINTR) {}
  try {
    if (middle < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw Error(ErrorKind::internal, std::string("cannot start the session's supervisor: fork: ") + std::strerror(errno));
    return attach_terminal(std::move(first), opts.program, plan.session_id);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", opts.program.c_str(), printable(e.what()).c_str());
    return e.exit_code();
  }
}

}  // namespace asbx
