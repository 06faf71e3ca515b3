// gVisor sessions (docs/ISOLATION.md): the tmpfs mounts the launcher writes into between init and
// start or reads back after the agent (HOME, the git tmpfs) are mounted on the seat, inside the
// session's own dir, and bound into the container (plan.isolation.seat_tmpfs): a tmpfs made by the
// sandbox lives in its own kernel, out of the seat's reach. Same size, mode and owner as the plan's.
// Unmounted (lazily: the launcher's pinned fds keep reading them) when the session ends; gc unmounts
// what a killed launcher left (unmount_seat_tmpfs).
#pragma once
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "base/plan.h"
#include "launcher/lifecycle/session_dir.h"

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
  std::string owner_;  // SESSION_DIR/tmpfs/owner, once written
  std::string dir_;    // the session dir, once taken (session_dir.h)
};

// PLAN's session dir taken under LOCK (session_dir.h), for this launcher to write its owner file in:
// made; or found, and refused (create_failed, refuse_if_held) when an owner file names another live
// launcher; a found dir no live launcher owns is cleared of what gone ones left (owner files, a
// socket, a seat tmpfs unmounted first, never across a mount), unless this launcher owns it already.
// Throws create_failed, as for a held id, when its lock stays held 10 s (all takers alike: a warm
// claim does not go cold to wait again). False, errno set, when it cannot be made, opened or cleared.
bool take_session_dir(const LaunchPlan& plan, SessionDirLock& lock);

// A launcher leaving its session dir DIR: under the dir's lock, its owner file OWNER ("" when it wrote
// none) goes and, when no owner file is left in DIR, its seat tmpfs and DIR itself (only when empty,
// never across a mount). Without the lock (2 s) nothing goes: OWNER names a launcher that is ending,
// and gc's sweep takes a dir whose owner is gone.
void leave_session_dir(const std::string& dir, const std::string& owner);

// Lazily unmounts every seat tmpfs and idmapped staging under SESSION_DIR/tmpfs/ (gc, before the dir
// is removed). False when one is still a mount: the dir must not be removed then (a staging is the
// owner's workspace, and a recursive removal crosses mounts).
bool unmount_seat_tmpfs(const std::string& session_dir);

// A session dir that outlived both its launcher and its container (the launcher killed before its
// create, or its container removed by another hand: no label leads gc to it).
struct StaleSeatTmpfs {
  std::string session;
  std::int64_t started_unix = 0;
  std::string why;
};
// Unmounts and removes each session dir under `runtime_dir` whose owner (either file) is of another
// boot or no longer alive, unless its session is `listed` (a container still carries it: gc's own loop).
std::vector<StaleSeatTmpfs> collect_stale_seat_tmpfs(const std::string& runtime_dir, const std::set<std::string>& listed,
                                                     const std::string& boot_id,
                                                     const std::function<bool(long pid, std::int64_t started_unix)>& alive);

}  // namespace asbx
