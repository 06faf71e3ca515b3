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

// An owner file at PATH that does not name PLAN's launcher is removed: the caller took the session
// dir under its lock and refuse_if_held let it (that owner is gone, or the file is not whole).
void drop_gone_owner(const std::string& path, const LaunchPlan& plan);

// A launcher leaving its session dir DIR: under the dir's lock, its owner file OWNER ("" when it wrote
// none) goes and, when no owner file is left in DIR, its seat tmpfs and DIR itself (only when empty,
// never across a mount). Without the lock (2 s) nothing goes: OWNER names a launcher that is ending,
// and gc's sweep takes a dir whose owner is gone.
void leave_session_dir(const std::string& dir, const std::string& owner);

// Lazily unmounts every seat tmpfs and idmapped staging under SESSION_DIR/tmpfs/ (gc, before the dir
// is removed). False when one is still a mount: the dir must not be removed then (a staging is the
// owner's workspace, and a recursive removal crosses mounts).
bool unmount_seat_tmpfs(const std::string& session_dir);

// The session dir's owner: the launcher's pid, the session's start and the boot, as the container's
// labels carry them. Whoever makes the session dir writes SESSION_DIR/owner (the seccomp listener,
// a persistent session's claim); mount() writes SESSION_DIR/tmpfs/owner before the first mount.
// False when it cannot be written.
bool write_session_owner(const std::string& path, const LaunchPlan& plan);
// SESSION_DIR/owner replaced whole (a new file renamed over it): a persistent session's supervisor
// names itself once it has relabelled the plan. False when it cannot be.
bool replace_session_owner(const std::string& session_dir, const LaunchPlan& plan);

// The live launcher, other than the plan's own, that SESSION_DIR's owner (either file) names; 0 when
// none does (no owner, another boot, or its launcher gone). A second launcher of a session id must
// never take over the first's sockets.
long session_dir_holder(const LaunchPlan& plan, const std::function<bool(long pid, std::int64_t started_unix)>& alive);

// Throws create_failed when another live launcher holds SESSION_DIR (session_dir_holder): a second
// launcher of an id never touches the first's dir, socket or tmpfs.
void refuse_if_held(const LaunchPlan& plan);

// Whether a session dir under RUNTIME_DIR (a pool member's aside: its keeper is killed at claim)
// has an owner (either file) of this boot whose launcher is gone: a killed launcher's session, whose
// container gc would remove. Reads only the seat's files.
bool dead_owner_under(const std::string& runtime_dir, const std::string& boot_id,
                      const std::function<bool(long pid, std::int64_t started_unix)>& alive);

// Whether DIR's owner (either file) names a launcher of this boot that is alive: a dir gc must not
// take away, though a container of its id was an orphan (a new launcher of that id holds it now).
bool owner_holds(const std::string& dir, const std::string& boot_id,
                 const std::function<bool(long pid, std::int64_t started_unix)>& alive);

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
