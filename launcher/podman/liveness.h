// Is a process that wrote down its pid and start time still that process? gc judges sessions,
// removers and (when the pool exists) claims by it: a pid alone may have been reused.
#pragma once
#include <cstdint>

namespace asbx {

// Seconds since the epoch at which `pid` started (from /proc), or -1.
std::int64_t process_start_unix(long pid);

// `pid` exists, is not a zombie (a launcher SIGKILLed whose caller has not reaped it yet) and
// started no later than `started_unix` (+1 s of rounding); a process that cannot be read counts as alive.
bool launcher_alive(long pid, std::int64_t started_unix);

}  // namespace asbx
