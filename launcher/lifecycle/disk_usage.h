// What a session adds to the seat's disk, measured the two ways the watcher combines
// (launcher/lifecycle/disk_watch.h): the filesystems' own counters (statvfs: one system call,
// every tick, but shared with every other writer there) and a walk of the session's writable
// binds (exact for the session, costly: only when the counters say it may matter). The rule that
// decides from them is pure (disk_step) and unit-tested.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/plan.h"

namespace asbx {

// One filesystem a session can write, as statvfs saw it.
struct FsRoom {
  std::string path;               // the first writable dir on it (for messages)
  std::uint64_t dev = 0;
  std::int64_t free_bytes = -1;   // f_bavail * f_frsize: what an unprivileged writer still gets
  std::int64_t free_inodes = -1;  // f_favail
  std::int64_t used_bytes = 0;    // (f_blocks - f_bfree) * f_frsize
  std::int64_t used_inodes = 0;   // f_files - f_ffree
};

// statvfs of an open dir; free_bytes < 0 when it failed.
FsRoom fs_room(int fd, const std::string& path);

// The bytes (st_blocks * 512, a hard-linked inode once) and the entries beneath some dirs, and the
// dirs' own blocks (a name flood grows a directory, and it keeps the blocks after), never
// following a link, at most `max_entries` and 128 levels (then `stopped` says so and the figures
// are a floor). `interrupt`, asked every 1024 entries, may end the walk early (`interrupted`).
// A file with names outside the dirs (a hard link from a store, a local clone's objects) counts
// in `shared_*`, not in the figures: its names here can go without freeing a byte.
struct TreeUsage {
  std::int64_t bytes = 0;
  std::int64_t inodes = 0;
  std::int64_t shared_bytes = 0, shared_inodes = 0;
  std::string stopped;
  bool interrupted = false;
};
TreeUsage tree_usage(const std::vector<int>& dir_fds, const std::vector<std::string>& labels, std::int64_t max_entries,
                     const std::function<bool()>& interrupt = {});

// The writable binds of a plan (a bind inside another is walked with it), and where they are;
// gVisor's seat tmpfs binds are memory (sized like the tmpfs they stand for), not the seat's disk.
std::vector<std::string> writable_dirs(const LaunchPlan& plan);

// The floor, before anything exists: "" or the refusal (which filesystem, how much is left).
std::string floor_problem(const std::vector<FsRoom>& rooms, const Limits& l);

// The pure rule of one tick. `exact` is the session's own addition at its last walk, `grown` what
// its filesystems gained since that walk (an upper bound of the session's growth since, unless
// another writer freed space meanwhile: the periodic walk catches that).
struct DiskTick {
  std::int64_t exact_bytes = 0, exact_inodes = 0;
  std::int64_t grown_bytes = 0, grown_inodes = 0;
  bool near_floor = false;       // a filesystem is within the guard band above the floor (walked when it grows)
  std::int64_t since_walk_ms = 0;
  std::int64_t walk_gap_ms = 0;  // the least time between two periodic walks (5 x the last one's length)
};
// `pressed`: the budget or the floor may be at stake, walked at once with the session frozen (no
// gap: a slow walk must not widen the time a writer goes unmeasured); `periodic`: the 10 s walk.
enum class WalkNeed { none, periodic, pressed };
WalkNeed must_walk(const DiskTick& t, const Limits& l, std::int64_t periodic_ms);

// How long the watcher waits before its next tick: `tick_ms`, less when the counters, growing as
// fast as they grew over the last `over_ms`, would use up `room_bytes` (what is left before the
// budget or the floor's guard band presses) within four ticks: a quarter of that time, at least
// 1 ms. A fresh writer fills the page cache at up to 5 GB/s here: 100 MB in one 20 ms tick.
// Nothing growing, the next tick comes before a writer starting now at that speed could fill the
// room, but not sooner than every 4 ms: an agent can sit idle just below its budget for its whole
// session, and 1 ms ticks at real-time priority cost about 2 % of a core each (4 ms: a writer's
// first gap is at most 20 MiB). From 100 MiB of room every 20 ms, as before.
int next_tick_ms(std::int64_t room_bytes, std::int64_t grew_bytes, std::int64_t over_ms, int tick_ms);
constexpr std::int64_t kFastestWriterBytesPerMs = std::int64_t(5) << 20;  // 5 GiB/s: a fresh page-cache writer here
constexpr int kIdleTickMinMs = 4;
// That room: what is left of the budget past the last walk and the counters' growth since, or less
// room above a filesystem's guard band. Inside the band it is the budget's alone: there any growth
// already presses a walk each tick, and a faster pace would only freeze the sessions more often.
std::int64_t pace_room(const DiskTick& t, const std::vector<FsRoom>& now, const Limits& l);

// After a walk: "" (go on), "budget", "floor", "below_floor" or "unmeasured" (end the session).
// Near the floor a session is ended when it added more than the slack since it started (one that
// adds nothing is left alone). Below the floor itself every session that can write there is ended,
// whatever its walk explains: what no walk sees (files in flight over a unix socket) is freed with
// its processes (docs/DECISIONS.md). A walk stopped by its bounds (`stopped`) fails closed: "unmeasured".
enum class FloorState { clear, near, below };
std::string disk_verdict(std::int64_t added_bytes, std::int64_t added_inodes, FloorState floor, const Limits& l,
                         const std::string& stopped = "");

// The first filesystem within the guard band above the floor, by its path; "" when none is.
std::string near_floor_path(const std::vector<FsRoom>& rooms, const Limits& l);
// The first filesystem below the floor itself; "" when none is.
std::string below_floor_path(const std::vector<FsRoom>& rooms, const Limits& l);

// What a session's disk verdict says (the record's message).
struct DiskEnding {
  std::string ended;          // "budget", "floor", "below_floor" or "unmeasured"
  bool after_exit = false;    // found by the measurement after the container ended
  std::string fs;             // floor, below_floor: the filesystem near or below it
  std::string stopped;        // unmeasured: why the walk stopped
  std::int64_t peak_bytes = 0, peak_inodes = 0, hidden_bytes = 0;
  std::vector<std::string> dirs;
};
std::string disk_ended_message(const DiskEnding& e, const Limits& l);

inline constexpr std::int64_t kFloorGuardBytes = 256LL << 20;  // act this far above the floor
inline constexpr std::int64_t kFloorGuardInodes = 5000;
inline constexpr std::int64_t kFloorSlackBytes = 1LL << 20;   // what a session may add near the floor
inline constexpr std::int64_t kFloorSlackInodes = 100;

}  // namespace asbx
