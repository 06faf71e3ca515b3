// `PROGRAM pool fill` detached (its own session, stdio on /dev/null, not waited for): a warm
// session refills what it took after its record is written. Best effort: gc and the next fill
// make what this does not.
#pragma once
#include <string>

namespace asbx {

void spawn_refill(const std::string& program);

}  // namespace asbx
