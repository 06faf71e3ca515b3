// The session's disk budget and the seat's floor, kept by the launcher: this kernel has no
// quotas (no CONFIG_QUOTA; docs/DECISIONS.md). A thread reads statvfs of every filesystem the
// session can write each 20 ms (one call per filesystem; sooner, down to 1 ms, as a fast writer
// nears what it may add: next_tick_ms), at SCHED_FIFO 1 when allowed (tick_priority.h). When what
// they gained since the last walk could take the session to its budget, or one of them comes within
// 256 MiB (5000 inodes) of the floor and grows, the container's cgroup is frozen at once and the
// session's writable binds are walked (exact bytes and inodes of this session, whoever else writes
// there), with the files its tasks hold open without a name (disk_hidden.h); past its budget, near
// the floor having added more than 1 MiB (100 files), or when the walk could not finish (its
// bounds), the session is killed (cause "disk", 229), else thawed. A walk every 10 s without
// freezing catches growth another writer's deletions hid from the counters; meanwhile a second
// thread reads the counters at the same pace and freezes the session the moment they press (a
// thread asleep between ticks is scheduled at once on a loaded seat, a CPU-bound walk is not), and
// the walk is redone frozen. The walk at the end (the container gone) gives its verdict too (budget
// or unmeasured: "after the agent ended"). docs/RESOURCES.md "Disk".
#pragma once
#include <cstdint>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/plan.h"
#include "launcher/lifecycle/disk_usage.h"

namespace asbx {

inline constexpr int kDiskTickMs = 20;
inline constexpr std::int64_t kDiskPeriodicWalkMs = 10'000;

// Before create: the plan's writable dirs, opened, and their filesystems; throws
// Error(disk_floor) when one is below the floor (nothing exists yet).
class DiskWatch {
 public:
  DiskWatch() = default;
  ~DiskWatch();
  DiskWatch(const DiskWatch&) = delete;
  DiskWatch& operator=(const DiskWatch&) = delete;

  void check_floor(const LaunchPlan& plan);
  // After init, before start: the baseline walk (incomplete: Error(workspace_rejected)); then the
  // thread. `freezer` is the container's freezer dir ("" = none: it is walked running, and its
  // unnamed open files are not read), `version` "v1"/"v2"; `kill` ends the agent.
  void arm(const std::string& freezer, const std::string& version, std::function<void()> kill);
  // Stops the thread and walks once more (the container is gone). Idempotent.
  void stop();
  std::string ended() const { return ended_; }  // "", "budget", "floor" or "unmeasured"; after stop()
  std::string ended_message() const;
  nlohmann::json record() const;

 private:
  void loop();
  void tick();
  std::vector<FsRoom> read_rooms();
  DiskTick measure(const std::vector<FsRoom>& now) const;
  class Sentinel;
  bool pressed_now(std::string& near_fs);
  void pace(const std::vector<FsRoom>& now, const DiskTick& t);
  void walk(bool freeze, const std::string& near_fs);
  bool freeze(bool on);
  std::vector<int> fd_list() const;
  void reread_rooms();

  Limits limits_;
  std::vector<std::string> dirs_;
  std::vector<UniqueFd> fds_;
  std::vector<FsRoom> rooms_;        // one per filesystem, at the last walk
  std::vector<std::size_t> room_fd_;  // the fd (of fds_) each room is read through
  std::vector<std::int64_t> min_free_bytes_, min_free_inodes_;
  std::vector<dev_t> devs_;
  std::string freezer_, version_, procs_;
  std::function<void()> kill_;
  TreeUsage base_;
  std::int64_t exact_bytes_ = 0, exact_inodes_ = 0, peak_bytes_ = 0, peak_inodes_ = 0;
  std::int64_t hidden_bytes_ = 0, hidden_inodes_ = 0, peak_hidden_bytes_ = 0, interrupted_ = 0;
  std::int64_t walks_ = 0, frozen_walks_ = 0, ticks_ = 0, last_walk_ms_ = 0, walk_len_ms_ = 0, walk_total_ms_ = 0;
  std::string stopped_, ended_, ended_fs_, ended_stopped_;
  int next_tick_ms_ = kDiskTickMs;                     // pace(): shorter as a writer nears what it may add
  std::int64_t last_tick_used_ = 0, last_tick_at_ = 0;  // the counters' sum at the last tick, and when
  std::string priority_ = "normal (not armed)";  // the ticks' (tick_priority.h), set by the thread
  bool armed_ = false, after_exit_ = false;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  std::mutex mu_;
};

}  // namespace asbx
