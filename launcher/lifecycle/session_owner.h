// A session dir's owner files: RUNTIME_DIR/<id>/owner (the seccomp recorder's, a warm claim's, a
// persistent session's) and RUNTIME_DIR/<id>/tmpfs/owner (a seat tmpfs's), each "PID STARTED BOOT_ID\n"
// as the container's labels carry them. Who holds an id, and whose leftovers gc may take, is read here.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "base/plan.h"

namespace asbx {

// The session dir's owner: the launcher's pid, the session's start and the boot, as the container's
// labels carry them. Whoever makes the session dir writes SESSION_DIR/owner (the seccomp listener,
// a persistent session's claim); mount() writes SESSION_DIR/tmpfs/owner before the first mount.
// False when it cannot be written.
bool write_session_owner(const std::string& path, const LaunchPlan& plan);
// SESSION_DIR/owner replaced whole (a new file renamed over it): a persistent session's supervisor
// names itself once it has relabelled the plan. False when it cannot be.
bool replace_session_owner(const std::string& session_dir, const LaunchPlan& plan);

// The live launcher, other than the plan's own, that an owner file of SESSION_DIR (either) names; 0
// when none does (no owner, another boot, or its launcher gone). A second launcher of a session id must
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

// A launcher as an owner file names it: its pid and its start (0, 0: none).
struct Mine {
  long pid = 0;
  std::int64_t started = 0;
};

// What a session dir's owner files (both) say.
struct DirOwners {
  bool whole = false;           // at least one file is whole
  long pid = 0;                 // the first whole one's (the seat tmpfs's first): gc's line names it
  std::int64_t started = 0;
  std::string boot;
  long live = 0;                // a launcher of BOOT_ID that is alive, other than MINE, one file names
  bool mine = false;            // a file names MINE (its pid and its start: a reused pid is not MINE)
  bool gone_this_boot = false;  // a file names a launcher of BOOT_ID that is gone
};
// Either file may be the one that counts: a seat tmpfs's left by a killed launcher must not hide the
// live owner a new launcher of the id wrote beside it. MINE: {} for none.
DirOwners read_dir_owners(const std::string& dir, const std::string& boot_id,
                          const std::function<bool(long pid, std::int64_t started_unix)>& alive, Mine mine);

// Whether an owner file in PLAN's session dir names PLAN's own launcher (another part of it took the dir).
bool owned_by_plan(const LaunchPlan& plan);

}  // namespace asbx
