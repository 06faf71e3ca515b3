// The seat's runtime dir: session dirs, removal markers, the pool's files and the sessions' seccomp
// profiles live there, and gc and every launch act on what they find in it. A dir another user may
// write could hold their plants (an owner file that keeps a session id, a marker that keeps gc away),
// so it is held to what OpenSSH's StrictModes asks of ~/.ssh (docs/DECISIONS.md).
#pragma once
#include "base/seat_config.h"

namespace asbx {

// Throws Error(config) naming SEAT's runtime dir and the seat file when it is there but cannot be
// opened, is not a directory (a link is not followed), is not owned by the launcher's user, or group
// or others may write it. A missing one passes: the first session dir's taker makes it, 0700. Creates nothing.
void check_runtime_dir(const SeatConfig& seat);

// Why gc may not act in DIR, another seat's runtime dir it found in a label ("" when it may, or
// when DIR is not there): a component from / on is a link or not a directory, is owned by neither
// root nor this user, or others may write it (a sticky dir above DIR aside); or DIR itself is not
// this user's or others may write it. Whoever controls a component could lead gc's unmounts and
// removals anywhere (docs/THREATS.md).
std::string untrusted_runtime_dir(const std::string& dir);

}  // namespace asbx
