#include "launcher/podman/cgroup_reap.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sstream>
#include <vector>

#include "base/fdio.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/podman/cgroup_monitor.h"

namespace asbx {
namespace {

// The pids listed in `dir`/cgroup.procs; none when the dir is gone.
std::vector<long> tasks_of(const std::string& dir) {
  std::vector<long> pids;
  auto text = read_small_file(dir + "/cgroup.procs");
  if (!text) return pids;
  std::istringstream in(*text);
  for (long pid; in >> pid;) pids.push_back(pid);
  return pids;
}

bool set_frozen(const CgroupLocation& at, bool on) {
  if (at.freezer.empty()) return false;
  bool v2 = at.version == "v2";
  int fd = ::open((at.freezer + (v2 ? "/cgroup.freeze" : "/freezer.state")).c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write_all(fd, v2 ? (on ? "1" : "0") : (on ? "FROZEN" : "THAWED"));
  ::close(fd);
  return ok;
}

// Through a pidfd, so the signal reaches the task that was listed, not a later one of that pid.
void kill_task(long pid) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (fd < 0) return;  // gone meanwhile
  ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
  ::close(fd);
}

}  // namespace

ReapResult reap_cgroup(const CgroupLocation& at, int ms) {
  ReapResult r;
  if (at.pids.empty()) return r;
  std::vector<long> left = tasks_of(at.pids);
  r.found = static_cast<int>(left.size());
  for (std::int64_t end = steady_ms() + ms; !left.empty() && steady_ms() < end; left = tasks_of(at.pids)) {
    bool frozen = set_frozen(at, true);
    for (long pid : tasks_of(at.pids)) kill_task(pid);
    if (frozen) set_frozen(at, false);  // a frozen task dies once thawed: SIGKILL first, then thaw
    ::usleep(20 * 1000);
  }
  r.empty = left.empty();
  return r;
}

void reap_after_removal(const CgroupLocation& at, SessionResult& result) {
  constexpr int kReapMs = 2000;
  ReapResult r = reap_cgroup(at, kReapMs);
  if (r.found == 0) return;
  result.warnings.push_back("gVisor: " + std::to_string(r.found) + " task(s) were still in the container's cgroup "
                            "after its removal (the sandbox outlived podman's answer): " +
                            (r.empty ? "killed" : "NOT all killed within 2 s; kill them by hand: " + at.pids));
  if (!r.empty) result.container_removed = false;
}

}  // namespace asbx
