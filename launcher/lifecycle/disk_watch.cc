#include "launcher/lifecycle/disk_watch.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <system_error>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"
#include "base/units.h"
#include "base/util.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/lifecycle/disk_hidden.h"
#include "launcher/lifecycle/tick_priority.h"
#include "launcher/podman/cgroup_monitor.h"

namespace asbx {
namespace {

constexpr std::int64_t kMaxWalkEntries = 4'000'000;
constexpr int kFreezeWaitMs = 500;

}  // namespace

DiskWatch::~DiskWatch() { stop(); }

void DiskWatch::check_floor(const LaunchPlan& plan) {
  limits_ = plan.limits;
  dirs_ = writable_dirs(plan);
  for (const auto& d : dirs_) {
    UniqueFd fd(::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st{};
    if (!fd || ::fstat(fd.get(), &st) != 0)
      throw Error(ErrorKind::workspace_rejected, "cannot open '" + d + "' to measure its disk use; nothing was created");
    if (std::find(devs_.begin(), devs_.end(), st.st_dev) == devs_.end()) {
      devs_.push_back(st.st_dev);
      room_fd_.push_back(fds_.size());
      rooms_.push_back(fs_room(fd.get(), d));
      min_free_bytes_.push_back(rooms_.back().free_bytes), min_free_inodes_.push_back(rooms_.back().free_inodes);
    }
    fds_.push_back(std::move(fd));
  }
  std::string problem = floor_problem(rooms_, limits_);
  if (!problem.empty()) throw Error(ErrorKind::disk_floor, problem);
}

void DiskWatch::arm(const std::string& freezer, const std::string& version, std::function<void()> kill) {
  if (fds_.empty() || armed_) return;
  freezer_ = freezer, version_ = version, kill_ = std::move(kill);
  procs_ = freezer.empty() ? "" : freezer + "/cgroup.procs";
  std::lock_guard<std::mutex> lock(mu_);
  base_ = tree_usage(fd_list(), dirs_, kMaxWalkEntries);
  if (!base_.stopped.empty())  // fail closed: what cannot be measured cannot be kept to a budget
    throw Error(ErrorKind::workspace_rejected, "the workspace could not be measured: " + base_.stopped +
                                                   "; the session was not started (its disk budget could not be kept)");
  reread_rooms();
  last_walk_ms_ = last_tick_at_ = steady_ms();
  for (const auto& r : rooms_) last_tick_used_ += r.used_bytes;
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) return;
  armed_ = true;
  thread_ = std::thread([this] { loop(); });
}

std::vector<int> DiskWatch::fd_list() const {
  std::vector<int> fds;
  for (const auto& f : fds_) fds.push_back(f.get());
  return fds;
}

void DiskWatch::reread_rooms() {
  for (std::size_t i = 0; i < rooms_.size(); ++i) rooms_[i] = fs_room(fds_[room_fd_[i]].get(), rooms_[i].path);
}

void DiskWatch::loop() {
  priority_ = raise_tick_priority();
  for (;;) {
    pollfd p{stop_pipe_[0], POLLIN, 0};
    int n = ::poll(&p, 1, next_tick_ms_);
    if (n < 0 && errno != EINTR) return;
    if (p.revents) return;
    std::lock_guard<std::mutex> lock(mu_);
    tick();
    if (!ended_.empty()) return;
  }
}

// The filesystems now (rooms_ stays the base: as at the last walk's start).
std::vector<FsRoom> DiskWatch::read_rooms() {
  std::vector<FsRoom> now;
  for (std::size_t i = 0; i < rooms_.size(); ++i) {
    now.push_back(fs_room(fds_[room_fd_[i]].get(), rooms_[i].path));
    min_free_bytes_[i] = std::min(min_free_bytes_[i], now.back().free_bytes);
    min_free_inodes_[i] = std::min(min_free_inodes_[i], now.back().free_inodes);
  }
  return now;
}

DiskTick DiskWatch::measure(const std::vector<FsRoom>& now) const {
  DiskTick t;
  t.exact_bytes = exact_bytes_, t.exact_inodes = exact_inodes_;
  for (std::size_t i = 0; i < rooms_.size(); ++i) {
    t.grown_bytes += std::max<std::int64_t>(0, now[i].used_bytes - rooms_[i].used_bytes);
    t.grown_inodes += std::max<std::int64_t>(0, now[i].used_inodes - rooms_[i].used_inodes);
  }
  t.near_floor = !near_floor_path(now, limits_).empty();
  t.since_walk_ms = steady_ms() - last_walk_ms_;
  t.walk_gap_ms = 5 * walk_len_ms_;
  return t;
}

// The next tick's time, from how fast the counters grew since the last one (next_tick_ms).
void DiskWatch::pace(const std::vector<FsRoom>& now, const DiskTick& t) {
  std::int64_t used = 0, at = steady_ms();
  for (const auto& r : now) used += r.used_bytes;
  next_tick_ms_ = next_tick_ms(pace_room(t, now, limits_), used - last_tick_used_, at - last_tick_at_, kDiskTickMs);
  last_tick_used_ = used, last_tick_at_ = at;
}

void DiskWatch::tick() {
  ++ticks_;
  std::vector<FsRoom> now = read_rooms();
  DiskTick t = measure(now);
  pace(now, t);
  WalkNeed need = must_walk(t, limits_, kDiskPeriodicWalkMs);
  if (need == WalkNeed::none) return;
  if (need == WalkNeed::pressed) freeze(true);  // at once, at the ticks' priority
  NormalPriority normal(tick_priority_raised(priority_));
  walk(need == WalkNeed::pressed, near_floor_path(now, limits_));
  // Walks pressed by another writer's growth leave the session thawed at least as long as frozen.
  next_tick_ms_ = std::max<std::int64_t>(next_tick_ms_, std::min<std::int64_t>(kDiskTickMs, walk_len_ms_));
}

// Do the counters press now (and where, near the floor)? As a tick during a periodic walk reads them.
bool DiskWatch::pressed_now(std::string& near_fs) {
  ++ticks_;
  std::vector<FsRoom> now = read_rooms();
  DiskTick t = measure(now);
  pace(now, t);
  t.since_walk_ms = 0;  // a periodic walk is under way
  near_fs = near_floor_path(now, limits_);
  return must_walk(t, limits_, kDiskPeriodicWalkMs) == WalkNeed::pressed;
}

// For a walk the session runs through: a thread that reads the counters every tick and freezes
// the session as soon as they press. Until it is destroyed it alone reads the counters.
class DiskWatch::Sentinel {
 public:
  explicit Sentinel(DiskWatch& w) : w_(w), thread_([this] { run(); }) {}
  ~Sentinel() { finish(near_); }
  Sentinel(const Sentinel&) = delete;
  Sentinel& operator=(const Sentinel&) = delete;
  bool pressed() const { return pressed_.load(); }
  // Stops the thread: did the counters press (the session frozen), and near which floor.
  bool finish(std::string& near_fs) {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
    if (&near_fs != &near_) near_fs = near_;
    return pressed_.load();
  }

 private:
  void run() {
    if (tick_priority_raised(w_.priority_)) raise_tick_priority();
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(w_.next_tick_ms_), [this] { return done_; })) {
      if (!w_.pressed_now(near_)) continue;
      w_.freeze(true);
      pressed_ = true;
      return;
    }
  }

  DiskWatch& w_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> pressed_{false};
  std::string near_;
  std::thread thread_;  // last: started once the rest exists
};

// Frozen, the session cannot add while it is measured. The filesystems are read as it starts:
// what they gain during a walk the session runs through is the next tick's growth.
void DiskWatch::walk(bool frozen, const std::string& near) {
  std::int64_t t0 = steady_ms();
  bool froze = frozen && freeze(true);
  reread_rooms();
  bool can_press = !frozen && kill_ && !freezer_.empty();  // a walk asked frozen is never redone
  TreeUsage u;
  HiddenUsage h;
  std::string pressed_near;
  bool pressed = false;
  if (can_press) {
    std::unique_ptr<Sentinel> sentinel;
    try {
      sentinel = std::make_unique<Sentinel>(*this);
    } catch (const std::system_error&) {  // no thread to watch the counters meanwhile: measure frozen
      return walk(true, near);
    }
    std::function<bool()> stop = [&sentinel] { return sentinel->pressed(); };
    u = tree_usage(fd_list(), dirs_, kMaxWalkEntries, stop);
    if (!u.interrupted) h = hidden_usage(procs_, devs_, "/proc", stop);
    pressed = sentinel->finish(pressed_near);
  } else {
    u = tree_usage(fd_list(), dirs_, kMaxWalkEntries), h = hidden_usage(procs_, devs_, "/proc");
  }
  if (pressed) {  // the counters pressed meanwhile (the session is frozen already): measure again, frozen
    ++interrupted_, walk_total_ms_ += steady_ms() - t0;
    return walk(true, pressed_near);
  }
  std::string stopped = u.stopped.empty() && !h.error.empty() ? "the session's open files: " + h.error : u.stopped;
  if (stopped_.empty()) stopped_ = stopped;
  hidden_bytes_ = h.bytes, hidden_inodes_ = h.inodes, peak_hidden_bytes_ = std::max(peak_hidden_bytes_, h.bytes);
  exact_bytes_ = u.bytes - base_.bytes + h.bytes, exact_inodes_ = u.inodes - base_.inodes + h.inodes;
  peak_bytes_ = std::max(peak_bytes_, exact_bytes_), peak_inodes_ = std::max(peak_inodes_, exact_inodes_);
  ++walks_, frozen_walks_ += froze ? 1 : 0;
  // Below the floor only a running session is ended: after its end nothing of it holds the space.
  std::string below = kill_ ? below_floor_path(rooms_, limits_) : "";
  FloorState floor = !below.empty() ? FloorState::below : near.empty() ? FloorState::clear : FloorState::near;
  std::string verdict = ended_.empty() ? disk_verdict(exact_bytes_, exact_inodes_, floor, limits_, stopped) : "";
  if (!verdict.empty()) {
    ended_ = verdict, ended_fs_ = below.empty() ? near : below, ended_stopped_ = stopped, after_exit_ = !kill_;
    if (kill_) kill_();  // a frozen task dies once thawed: SIGKILL first, then thaw
  }
  if (frozen) freeze(false);  // also after a freeze that did not complete: never left FREEZING
  last_walk_ms_ = steady_ms();
  walk_len_ms_ = last_walk_ms_ - t0;
  walk_total_ms_ += walk_len_ms_;
}

// v1 freezer.state FROZEN/THAWED; v2 cgroup.freeze 1/0. True once frozen (or thawed).
bool DiskWatch::freeze(bool on) {
  if (freezer_.empty()) return false;
  bool v2 = version_ == "v2";
  std::string file = freezer_ + (v2 ? "/cgroup.freeze" : "/freezer.state");
  int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && write_all(fd, v2 ? (on ? "1" : "0") : (on ? "FROZEN" : "THAWED"));
  if (fd >= 0) ::close(fd);
  if (!ok || !on) return ok;
  std::int64_t until = steady_ms() + kFreezeWaitMs;
  while (steady_ms() < until) {
    auto text = read_small_file(v2 ? freezer_ + "/cgroup.events" : file);
    if (!text) return false;
    if (v2 ? text->find("frozen 1") != std::string::npos : text->rfind("FROZEN", 0) == 0) return true;
    ::usleep(1000);
  }
  return false;
}

void DiskWatch::stop() {
  if (thread_.joinable()) {
    (void)!::write(stop_pipe_[1], "x", 1);
    thread_.join();
  }
  for (int* fd : {&stop_pipe_[0], &stop_pipe_[1]})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  if (!armed_) return;
  armed_ = false;
  std::lock_guard<std::mutex> lock(mu_);
  auto kill = std::move(kill_);
  kill_ = nullptr;
  // The container is gone: what it left, its peak, the budget's verdict (no floor: no writer left).
  // The filesystems once more: an allocation the kill followed is in the lowest free figure.
  (void)read_rooms();
  walk(false, "");
  kill_ = std::move(kill);
}

std::string DiskWatch::ended_message() const {
  DiskEnding e{ended_, after_exit_, ended_fs_, ended_stopped_, peak_bytes_, peak_inodes_, peak_hidden_bytes_, dirs_};
  return disk_ended_message(e, limits_);
}

nlohmann::json DiskWatch::record() const {
  nlohmann::json fs = nlohmann::json::array();
  for (std::size_t i = 0; i < rooms_.size(); ++i)
    fs.push_back({{"path", rooms_[i].path}, {"free_bytes_min", min_free_bytes_[i]}, {"free_inodes_min", min_free_inodes_[i]}});
  return {{"budget_bytes", limits_.disk_bytes}, {"budget", format_size(limits_.disk_bytes)}, {"budget_inodes", limits_.disk_inodes},
          {"floor_bytes", limits_.floor_bytes}, {"floor_inodes", limits_.floor_inodes},
          {"kept_by", fds_.empty() ? "nothing to keep: no writable bind"
                                   : "launcher watcher: statvfs every 20 ms (down to 1 ms as a writer nears its budget), walk of the writable binds and the tasks' unnamed open files (cgroup frozen while measured)"},
          {"dirs", dirs_}, {"added_bytes", exact_bytes_}, {"added_inodes", exact_inodes_},
          {"peak_bytes", peak_bytes_}, {"peak_inodes", peak_inodes_}, {"ended", ended_.empty() ? nlohmann::json(nullptr) : nlohmann::json(ended_)},
          {"ended_after_exit", after_exit_}, {"hidden_bytes", hidden_bytes_}, {"hidden_inodes", hidden_inodes_},
          {"hidden_peak_bytes", peak_hidden_bytes_}, {"interrupted_walks", interrupted_},
          {"walks", walks_}, {"frozen_walks", frozen_walks_}, {"ticks", ticks_}, {"tick_priority", priority_}, {"walk_ms", walk_total_ms_},
          {"walk_stopped", stopped_.empty() ? nlohmann::json(nullptr) : nlohmann::json(stopped_)}, {"filesystems", fs}};
}

}  // namespace asbx
