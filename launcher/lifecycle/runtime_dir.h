// The seat's runtime dir: session dirs, removal markers, the pool's files and the sessions' seccomp
// profiles live there, and gc and every launch act on what they find in it. A dir another user may
// write could hold their plants (an owner file that keeps a session id, a marker that keeps gc away),
// so it is held to what OpenSSH's StrictModes asks of ~/.ssh (docs/DECISIONS.md).
#pragma once
#include <string>

#include "base/beneath.h"
#include "base/seat_config.h"

namespace asbx {

// Throws Error(config) naming SEAT's runtime dir and the seat file when it is there but cannot be
// opened, is not a directory (a link is not followed), is not owned by the launcher's user, or group
// or others may write it. A missing one passes: the first session dir's taker makes it, 0700. Creates nothing.
void check_runtime_dir(const SeatConfig& seat);

// DIR, another seat's runtime dir gc found in a label, opened (O_PATH) by a walk from / that never
// follows a link, when no one but root and this user could have put what is in it: every component a
// directory owned by root or this user that others cannot write (a sticky dir above DIR aside: only
// an entry's owner moves it), DIR itself this user's. Else an invalid fd, and WHY says what failed
// ("" when a component is not there). Whatever is read beneath the fd is what was checked.
UniqueFd open_trusted_dir(const std::string& dir, std::string& why);

}  // namespace asbx
