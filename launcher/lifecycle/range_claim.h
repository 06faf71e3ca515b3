// A rootful session's user namespace range (plan/userns.h), one per live session on the seat, so no
// session's agent is another's kernel uid: the kernel keeps some accounts per uid (files in flight,
// pipe pages, inotify watches), and a concurrent session is hostile too. Slot k is held by an
// exclusive flock on DIR/k.lock for the launcher's life (a persistent session's supervisor inherits
// the fd) and taken only when no process on the seat has an id of its range: an orphan whose
// launcher was SIGKILLed keeps its range until gc removes its container. The lowest free slot wins.
#pragma once
#include <cstdint>
#include <set>
#include <string>

namespace asbx {

// Machine-wide, as the ids are: every rootful seat config on the seat shares it.
inline constexpr const char* kRangeLockDir = "/run/agent-sandbox/userns";

class RangeClaim {
 public:
  // Throws Error(seat_full) when every slot is held or in use, Error(internal) on an OS error.
  explicit RangeClaim(const std::string& dir = kRangeLockDir, const std::string& proc = "/proc");
  ~RangeClaim();
  RangeClaim(const RangeClaim&) = delete;
  RangeClaim& operator=(const RangeClaim&) = delete;
  std::int64_t slot() const { return slot_; }
  int fd() const { return fd_; }  // the slot's lock (a pool member's keeper keeps it open)

 private:
  int fd_ = -1;
  std::int64_t slot_ = -1;
};

// The slots a live process has an id of (its Uid: and Gid: lines in PROC/PID/status).
std::set<std::int64_t> range_slots_of_processes(const std::string& proc = "/proc");

}  // namespace asbx
