#include "launcher/lifecycle/disk_usage.h"

#include <algorithm>
#include <map>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <utility>

#include "base/units.h"
#include "base/util.h"
#include "launcher/gitguard/walk.h"

namespace asbx {

FsRoom fs_room(int fd, const std::string& path) {
  FsRoom r;
  r.path = path;
  struct statvfs v{};
  if (::fstatvfs(fd, &v) != 0) return r;
  auto frsize = static_cast<std::int64_t>(v.f_frsize);
  r.free_bytes = static_cast<std::int64_t>(v.f_bavail) * frsize;
  r.free_inodes = static_cast<std::int64_t>(v.f_favail);
  r.used_bytes = static_cast<std::int64_t>(v.f_blocks - v.f_bfree) * frsize;
  r.used_inodes = static_cast<std::int64_t>(v.f_files - v.f_ffree);
  return r;
}

TreeUsage tree_usage(const std::vector<int>& dir_fds, const std::vector<std::string>& labels, std::int64_t max_entries,
                     const std::function<bool()>& interrupt) {
  TreeUsage u;
  WalkBudget budget;
  budget.max_entries = max_entries;
  struct Linked {
    std::int64_t bytes;
    nlink_t nlink, seen;
  };
  std::map<std::pair<dev_t, ino_t>, Linked> linked;  // a file with several names: once, if all are here
  std::int64_t asked = 0;
  auto halt = [&] { return u.interrupted || (interrupt && ++asked % 16 == 0 && (u.interrupted = interrupt())); };
  for (std::size_t i = 0; i < dir_fds.size() && !u.interrupted; ++i) {
    struct stat root{};  // the dir's own blocks: its names may be gone, a directory does not shrink
    if (::fstat(dir_fds[i], &root) == 0) u.bytes += static_cast<std::int64_t>(root.st_blocks) * 512;
    walk_beneath(dir_fds[i], labels[i], budget, [&](const WalkEntry& e) {
      std::int64_t bytes = static_cast<std::int64_t>(e.st.st_blocks) * 512;
      if (S_ISDIR(e.st.st_mode) || e.st.st_nlink < 2) {
        u.bytes += bytes, ++u.inodes;
        return true;
      }
      Linked& l = linked.try_emplace({e.st.st_dev, e.st.st_ino}, Linked{bytes, e.st.st_nlink, 0}).first->second;
      l.bytes = bytes, l.nlink = e.st.st_nlink, ++l.seen;
      return true;
    }, halt);
  }
  // A file with a name outside these dirs is not the session's: removing its names here frees
  // nothing, so it counts neither before nor after (else the removal would pay for new writes).
  for (const auto& [key, l] : linked) {
    if (l.seen >= l.nlink) u.bytes += l.bytes, ++u.inodes;
    else u.shared_bytes += l.bytes, ++u.shared_inodes;
  }
  u.stopped = u.interrupted ? "" : budget.stopped;
  return u;
}

std::vector<std::string> writable_dirs(const LaunchPlan& plan) {
  std::vector<std::string> all;
  auto seat_tmpfs = [&](const std::string& src) {  // gVisor: a tmpfs the launcher mounts on the seat (memory, sized)
    const auto& t = plan.isolation.seat_tmpfs;
    return std::any_of(t.begin(), t.end(), [&](const Mount& s) { return s.source == src; });
  };
  for (const auto& m : plan.mounts)
    if (m.type == "bind" && !m.read_only() && !seat_tmpfs(m.source)) all.push_back(m.source);
  std::sort(all.begin(), all.end());
  std::vector<std::string> out;
  for (const auto& d : all) {
    bool inside = std::any_of(out.begin(), out.end(), [&](const std::string& o) { return d == o || d.rfind(o + "/", 0) == 0; });
    if (!inside) out.push_back(d);
  }
  return out;
}

std::string floor_problem(const std::vector<FsRoom>& rooms, const Limits& l) {
  for (const auto& r : rooms) {
    if (r.free_bytes < 0) return "cannot read the free space of the filesystem holding '" + r.path + "'";
    if (r.free_bytes < l.floor_bytes)
      return "the filesystem holding '" + r.path + "' has " + format_size(r.free_bytes) + " free, below the seat's disk floor of " +
             format_size(l.floor_bytes) + " ([limits] disk_floor in " + l.disk_source + "); nothing was created";
    if (r.free_inodes < l.floor_inodes)
      return "the filesystem holding '" + r.path + "' has " + std::to_string(r.free_inodes) + " free inodes, below the seat's floor of " +
             std::to_string(l.floor_inodes) + " ([limits] disk_floor_inodes in " + l.disk_source + "); nothing was created";
  }
  return "";
}

WalkNeed must_walk(const DiskTick& t, const Limits& l, std::int64_t periodic_ms) {
  if (t.near_floor && (t.grown_bytes > 0 || t.grown_inodes > 0)) return WalkNeed::pressed;  // someone there is adding
  if (t.exact_bytes + t.grown_bytes >= l.disk_bytes || t.exact_inodes + t.grown_inodes >= l.disk_inodes) return WalkNeed::pressed;
  if (t.since_walk_ms < t.walk_gap_ms) return WalkNeed::none;
  // another writer freeing space could hide growth from the counters
  return t.since_walk_ms >= periodic_ms ? WalkNeed::periodic : WalkNeed::none;
}

int next_tick_ms(std::int64_t room_bytes, std::int64_t grew_bytes, std::int64_t over_ms, int tick_ms) {
  if (grew_bytes <= 0) {  // a writer starting now is first seen at the next tick: before it could fill the room
    std::int64_t fill_ms = room_bytes / kFastestWriterBytesPerMs;
    return room_bytes <= 0 || fill_ms >= tick_ms ? tick_ms : std::max<int>(kIdleTickMinMs, static_cast<int>(fill_ms));
  }
  if (room_bytes <= 0) return 1;
  over_ms = std::max<std::int64_t>(over_ms, 1);
  // room / (grew / over) / 4, in ms, without overflow for any room a filesystem can have
  double ms = static_cast<double>(room_bytes) / static_cast<double>(grew_bytes) * static_cast<double>(over_ms) / 4.0;
  return ms >= tick_ms ? tick_ms : std::max(1, static_cast<int>(ms));
}

std::int64_t pace_room(const DiskTick& t, const std::vector<FsRoom>& now, const Limits& l) {
  std::int64_t room = l.disk_bytes - t.exact_bytes - t.grown_bytes;
  for (const auto& r : now) {
    std::int64_t above_band = r.free_bytes - l.floor_bytes - kFloorGuardBytes;
    if (above_band > 0) room = std::min(room, above_band);
  }
  return room;
}

std::string disk_verdict(std::int64_t added_bytes, std::int64_t added_inodes, FloorState floor, const Limits& l,
                         const std::string& stopped) {
  if (!stopped.empty()) return "unmeasured";
  if (added_bytes >= l.disk_bytes || added_inodes >= l.disk_inodes) return "budget";
  bool added = added_bytes > kFloorSlackBytes || added_inodes > kFloorSlackInodes;
  if (floor != FloorState::clear && added) return "floor";
  return floor == FloorState::below ? "below_floor" : "";
}

std::string near_floor_path(const std::vector<FsRoom>& rooms, const Limits& l) {
  for (const auto& r : rooms)
    if (r.free_bytes < l.floor_bytes + kFloorGuardBytes || r.free_inodes < l.floor_inodes + kFloorGuardInodes) return r.path;
  return "";
}

std::string below_floor_path(const std::vector<FsRoom>& rooms, const Limits& l) {
  for (const auto& r : rooms)
    if (r.free_bytes < l.floor_bytes || r.free_inodes < l.floor_inodes) return r.path;
  return "";
}

std::string disk_ended_message(const DiskEnding& e, const Limits& l) {
  std::string head = e.after_exit ? "after the agent ended: " : "killed: ";
  const char* unnamed = " of it held open without a name (deleted files or dirs, O_TMPFILE files)";
  std::string peak = format_size(e.peak_bytes) + " in " + std::to_string(e.peak_inodes) + " inodes" +
                     (e.hidden_bytes > 0 ? ", " + format_size(e.hidden_bytes) + unnamed : "");
  if (e.ended == "unmeasured")
    return head + "the workspace could not be measured: " + e.stopped + "; its disk use counts as over the budget of " +
           format_size(l.disk_bytes);
  if (e.ended == "budget")
    return head + "the session reached its disk budget of " + format_size(l.disk_bytes) + " / " +
           std::to_string(l.disk_inodes) + " inodes (added " + peak + " at its peak, in " + join(e.dirs, ", ") + ")";
  std::string floor = format_size(l.floor_bytes) + " / " + std::to_string(l.floor_inodes) + " inodes";
  if (e.ended == "below_floor")
    return head + "the filesystem holding '" + e.fs + "' fell below the seat's disk floor of " + floor +
           " while the session could write there (its own files: " + peak +
           "; the rest is what no walk sees, or another writer's; [limits] disk_floor in " + l.disk_source + ")";
  return head + "the session wrote on '" + e.fs + "' near the seat's disk floor of " + floor + " (it had added " + peak +
         "; [limits] disk_floor in " + l.disk_source + ")";
}

}  // namespace asbx
