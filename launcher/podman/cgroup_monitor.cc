#include "launcher/podman/cgroup_monitor.h"

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/fdio.h"

namespace asbx {

std::optional<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

CgroupMonitor::~CgroupMonitor() { stop(); }

std::string CgroupMonitor::start(long pid, const std::string& container_id) {
  std::string proc_file = proc_ + "/" + std::to_string(pid) + "/cgroup";
  auto proc = read_small_file(proc_file);
  if (!proc) return "cannot read " + proc_file;
  CgroupLocation at = locate_cgroup(*proc, root_);
  if (at.version.empty()) return "cannot find the container's cgroup in " + proc_file;
  if (at.memory.find(container_id) == std::string::npos)
    return "the container has no cgroup of its own (it runs in " + at.memory + ")";
  at_ = at;
  if (!sample()) {
    at_ = {};
    gone_ = false;
    return "cannot read the counters in " + at.memory;
  }
  counters_.cgroup_version = at_.version;
  if (at_.memory.find(container_id) == std::string::npos)
    return "the container has no cgroup of its own (it runs in " + at_.memory + ")";
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) return "pipe2 failed";
  watch_oom();
  thread_ = std::thread([this] { loop(); });
  return "";
}

// Best effort: without the wake-up, the 100 ms sampling still sees the counters.
void CgroupMonitor::watch_oom() {
  if (at_.version == "v2") {
    wake_fd_ = ::open((at_.memory + "/memory.events").c_str(), O_RDONLY | O_CLOEXEC);
    return;
  }
  int efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int ofd = ::open((at_.memory + "/memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC);
  std::string line = std::to_string(efd) + " " + std::to_string(ofd);
  int cfd = ::open((at_.memory + "/cgroup.event_control").c_str(), O_WRONLY | O_CLOEXEC);
  bool ok = efd >= 0 && ofd >= 0 && cfd >= 0 && write_all(cfd, line);
  for (int fd : {ofd, cfd})
    if (fd >= 0) ::close(fd);
  if (ok) wake_fd_ = efd;
  else if (efd >= 0) ::close(efd);
}

void CgroupMonitor::loop() {
  for (;;) {
    pollfd fds[2] = {{stop_pipe_[0], POLLIN, 0}, {wake_fd_, static_cast<short>(at_.version == "v1" ? POLLIN : POLLPRI), 0}};
    int n = ::poll(fds, 2, fast_samples_ > 0 ? 5 : 100);
    if (n < 0 && errno != EINTR) return;
    if (fds[0].revents) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (fast_samples_ > 0) --fast_samples_;
    if (fds[1].revents) on_wake();
    else if (!gone_) sample();
  }
}

// v1: each eventfd count is an OOM of the memcg, or its removal; removal comes only
// after the files are gone, so counts read while the cgroup is still there are OOMs.
void CgroupMonitor::on_wake() {
  std::uint64_t count = 0;
  if (at_.version == "v1" && ::read(wake_fd_, &count, sizeof count) != sizeof count) count = 0;
  if (at_.version == "v2") {  // kernfs keeps answering POLLPRI until this fd reads the file again
    char buf[512];
    ::lseek(wake_fd_, 0, SEEK_SET);
    while (::read(wake_fd_, buf, sizeof buf) > 0) {
    }
  }
  if (!gone_ && sample() && count > 0) {
    oom_events_ += static_cast<std::int64_t>(count);
    fast_samples_ = 40;
  }
  if (gone_) {
    ::close(wake_fd_);
    wake_fd_ = -1;  // poll ignores a negative fd
  }
}

// memory.oom_control (v1) / memory.events (v2) unreadable means the cgroup is gone.
bool CgroupMonitor::sample() {
  CgroupSample s = sample_from(at_, read_small_file);
  if (s.oom_kills < 0) gone_ = true;
  else fold_sample(counters_, s);
  return !gone_;
}

KillCounters CgroupMonitor::stop() {
  if (thread_.joinable()) {
    (void)!::write(stop_pipe_[1], "x", 1);
    thread_.join();
  }
  for (int* fd : {&stop_pipe_[0], &stop_pipe_[1], &wake_fd_})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  std::lock_guard<std::mutex> lock(mu_);
  if (!gone_ && !at_.version.empty()) sample();
  if (oom_events_ > 0) counters_.oom_killed = true;
  return counters_;
}

}  // namespace asbx
