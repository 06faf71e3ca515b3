#include "launcher/lifecycle/disk_watch.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"
#include "base/units.h"
#include "base/util.h"
#include "launcher/lifecycle/pump.h"
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
  std::vector<dev_t> devs;
  for (const auto& d : dirs_) {
    UniqueFd fd(::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st{};
    if (!fd || ::fstat(fd.get(), &st) != 0)
      throw Error(ErrorKind::workspace_rejected, "cannot open '" + d + "' to measure its disk use; nothing was created");
    if (std::find(devs.begin(), devs.end(), st.st_dev) == devs.end()) {
      devs.push_back(st.st_dev);
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
  std::lock_guard<std::mutex> lock(mu_);
  base_ = tree_usage(fd_list(), dirs_, kMaxWalkEntries);
  stopped_ = base_.stopped;
  reread_rooms();
  last_walk_ms_ = steady_ms();
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
  for (;;) {
    pollfd p{stop_pipe_[0], POLLIN, 0};
    int n = ::poll(&p, 1, kDiskTickMs);
    if (n < 0 && errno != EINTR) return;
    if (p.revents) return;
    std::lock_guard<std::mutex> lock(mu_);
    tick();
    if (!ended_.empty()) return;
  }
}

void DiskWatch::tick() {
  ++ticks_;
  std::vector<FsRoom> now;
  DiskTick t;
  t.exact_bytes = exact_bytes_, t.exact_inodes = exact_inodes_;
  for (std::size_t i = 0; i < rooms_.size(); ++i) {
    FsRoom r = fs_room(fds_[room_fd_[i]].get(), rooms_[i].path);
    t.grown_bytes += std::max<std::int64_t>(0, r.used_bytes - rooms_[i].used_bytes);
    t.grown_inodes += std::max<std::int64_t>(0, r.used_inodes - rooms_[i].used_inodes);
    min_free_bytes_[i] = std::min(min_free_bytes_[i], r.free_bytes);
    min_free_inodes_[i] = std::min(min_free_inodes_[i], r.free_inodes);
    now.push_back(r);
  }
  t.near_floor = near_floor(now);
  t.since_walk_ms = steady_ms() - last_walk_ms_;
  t.walk_gap_ms = 5 * walk_len_ms_;
  if (!must_walk(t, limits_, kDiskPeriodicWalkMs)) return;
  bool pressed = t.near_floor || t.exact_bytes + t.grown_bytes >= limits_.disk_bytes ||
                 t.exact_inodes + t.grown_inodes >= limits_.disk_inodes;
  walk(pressed, t.near_floor);
}

bool DiskWatch::near_floor(const std::vector<FsRoom>& now) const {
  for (const auto& r : now)
    if (r.free_bytes < limits_.floor_bytes + kFloorGuardBytes || r.free_inodes < limits_.floor_inodes + kFloorGuardInodes)
      return true;
  return false;
}

// Frozen, the session cannot add while it is measured; its filesystems are re-read after the walk.
void DiskWatch::walk(bool frozen, bool near) {
  std::int64_t t0 = steady_ms();
  bool froze = frozen && freeze(true);
  TreeUsage u = tree_usage(fd_list(), dirs_, kMaxWalkEntries);
  if (stopped_.empty()) stopped_ = u.stopped;
  exact_bytes_ = u.bytes - base_.bytes, exact_inodes_ = u.inodes - base_.inodes;
  peak_bytes_ = std::max(peak_bytes_, exact_bytes_), peak_inodes_ = std::max(peak_inodes_, exact_inodes_);
  reread_rooms();
  ++walks_, frozen_walks_ += froze ? 1 : 0;
  std::string verdict = kill_ && ended_.empty() ? disk_verdict(exact_bytes_, exact_inodes_, near, limits_) : "";
  if (!verdict.empty()) {
    ended_ = verdict;
    for (const auto& r : rooms_)
      if (r.free_bytes < limits_.floor_bytes + kFloorGuardBytes || r.free_inodes < limits_.floor_inodes + kFloorGuardInodes)
        ended_fs_ = r.path;
    kill_();  // a frozen task dies once thawed: SIGKILL first, then thaw
  }
  if (froze) freeze(false);
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
  walk(false, false);  // the container is gone: what it left, and the last peak
  kill_ = std::move(kill);
}

std::string DiskWatch::ended_message() const {
  if (ended_ == "budget")
    return "killed: the session reached its disk budget of " + format_size(limits_.disk_bytes) + " / " +
           std::to_string(limits_.disk_inodes) + " inodes (added " + format_size(peak_bytes_) + " in " +
           std::to_string(peak_inodes_) + " inodes at its peak, in " + join(dirs_, ", ") + ")";
  return "killed: the session wrote on '" + ended_fs_ + "' near the seat's disk floor of " + format_size(limits_.floor_bytes) +
         " / " + std::to_string(limits_.floor_inodes) + " inodes (it had added " + format_size(peak_bytes_) + " in " +
         std::to_string(peak_inodes_) + " inodes; [limits] disk_floor in " + limits_.disk_source + ")";
}

}  // namespace asbx

namespace asbx {

nlohmann::json DiskWatch::record() const {
  nlohmann::json fs = nlohmann::json::array();
  for (std::size_t i = 0; i < rooms_.size(); ++i)
    fs.push_back({{"path", rooms_[i].path}, {"free_bytes_min", min_free_bytes_[i]}, {"free_inodes_min", min_free_inodes_[i]}});
  return {{"budget_bytes", limits_.disk_bytes}, {"budget", format_size(limits_.disk_bytes)}, {"budget_inodes", limits_.disk_inodes},
          {"floor_bytes", limits_.floor_bytes}, {"floor_inodes", limits_.floor_inodes},
          {"kept_by", fds_.empty() ? "nothing to keep: no writable bind" : "launcher watcher: statvfs every 20 ms, walk of the writable binds (cgroup frozen while measured)"},
          {"dirs", dirs_}, {"added_bytes", exact_bytes_}, {"added_inodes", exact_inodes_},
          {"peak_bytes", peak_bytes_}, {"peak_inodes", peak_inodes_}, {"ended", ended_.empty() ? nlohmann::json(nullptr) : nlohmann::json(ended_)},
          {"walks", walks_}, {"frozen_walks", frozen_walks_}, {"ticks", ticks_}, {"walk_ms", walk_total_ms_},
          {"walk_stopped", stopped_.empty() ? nlohmann::json(nullptr) : nlohmann::json(stopped_)}, {"filesystems", fs}};
}

}  // namespace asbx
