// Watches a running container's own cgroup and keeps its counters, because podman 4.3
// forgets them: State.OOMKilled is always false and the cgroup is deleted before /wait
// returns. A thread samples the counter files every 100 ms and wakes at once on an OOM
// (v1: an eventfd registered on memory.oom_control through cgroup.event_control, the
// kernel's own notification; v2: POLLPRI on memory.events). See docs/LIFECYCLE.md.
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "launcher/podman/cgroup_counters.h"
#include "base/result.h"

namespace asbx {

// The whole text of a file, or nullopt when it cannot be read.
std::optional<std::string> read_small_file(const std::string& path);

class CgroupMonitor {
 public:
  // `root`: where the cgroup hierarchies are mounted; `proc`: where /proc/<pid>/cgroup is
  // read. Tests point both at a copy of a v1 or a v2 fixture, whatever this host runs.
  explicit CgroupMonitor(std::string root = "/sys/fs/cgroup", std::string proc = "/proc")
      : root_(std::move(root)), proc_(std::move(proc)) {}
  ~CgroupMonitor();
  CgroupMonitor(const CgroupMonitor&) = delete;
  CgroupMonitor& operator=(const CgroupMonitor&) = delete;

  // Finds the cgroup of `pid` (a process of the container) and starts watching it; the
  // cgroup's path must hold `container_id` (rootless on v1 the process sits in its
  // caller's cgroup, whose counters are not the session's). Returns "" or why it cannot
  // watch (the session then runs without counters).
  std::string start(long pid, const std::string& container_id);
  // A last reading (when the cgroup still exists); stops the thread. Idempotent.
  KillCounters stop();
  // Where the container's cgroup is (after a successful start; empty otherwise).
  const CgroupLocation& location() const { return at_; }

 private:
  void loop();
  bool sample();  // false once the cgroup is gone
  void watch_oom();
  void on_wake();

  std::string root_;
  std::string proc_;
  CgroupLocation at_;
  std::thread thread_;
  int stop_pipe_[2] = {-1, -1};
  int wake_fd_ = -1;  // v1 eventfd / v2 memory.events
  std::mutex mu_;
  KillCounters counters_;
  std::int64_t oom_events_ = 0;
  int fast_samples_ = 0;  // after an OOM wake-up: sample every 5 ms for a while
  bool gone_ = false;
};

}  // namespace asbx
