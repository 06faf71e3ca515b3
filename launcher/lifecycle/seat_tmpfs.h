// gVisor sessions (docs/ISOLATION.md): the tmpfs mounts the launcher writes into between init and
// start or reads back after the agent (HOME, the git tmpfs) are mounted on the seat, inside the
// session's own dir, and bound into the container (plan.isolation.seat_tmpfs): a tmpfs made by the
// sandbox lives in its own kernel, out of the seat's reach. Same size, mode and owner as the plan's.
// Unmounted (lazily: the launcher's pinned fds keep reading them) when the session ends; gc unmounts
// what a killed launcher left (unmount_seat_tmpfs).
#pragma once
#include <string>
#include <vector>

#include "base/plan.h"

namespace asbx {

class SeatTmpfs {
 public:
  SeatTmpfs() = default;
  SeatTmpfs(const SeatTmpfs&) = delete;
  SeatTmpfs& operator=(const SeatTmpfs&) = delete;
  ~SeatTmpfs() { release(); }
  // Throws Error(isolation_unavailable) naming the mount that failed; nothing of it stays.
  void mount(const LaunchPlan& plan);
  void release();

 private:
  std::vector<std::string> mounted_;
  std::string made_dir_;  // the session dir, when this object created it
};

// Lazily unmounts every seat tmpfs under SESSION_DIR/tmpfs/ (gc, before the dir is removed).
void unmount_seat_tmpfs(const std::string& session_dir);

}  // namespace asbx
