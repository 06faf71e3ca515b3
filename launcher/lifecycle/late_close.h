// Closes that wait for the kernel, kept off the caller's time. The last close of the tripwire's TUN
// device unregisters it (an RCU grace period: about 20 ms here) and the last close of an inotify
// instance that had watches waits for their reaper (SRCU: about 15 ms); together a third of a warm
// `-- true` (docs/BENCHMARKS.md, stop 56). Such an fd, once its user is done with it, is kept here.
// The session's remover (deferred_removal.h) is forked holding a copy: the launcher drops its own
// (no longer the last, so at once) before it lets the remover go, and the remover closes them on
// its own time. When no remover is forked, they are closed when the launcher exits.
#pragma once
#include "base/beneath.h"

namespace asbx {

inline constexpr int kMaxLateFds = 8;  // more are closed at once, as before

void close_late(UniqueFd fd);

// What a fork copies: a plain array, read in the child with no lock and no allocation.
struct LateFds {
  int fd[kMaxLateFds] = {};
  int n = 0;
};
LateFds late_fds();  // sorted ascending
void drop_late_fds();  // closes this process's copies of them (cheap while a child holds them too)

// In a forked child (async-signal-safe): closes every fd from 4 up but those of `keep` (sorted).
void close_from_4_but(const LateFds& keep);

}  // namespace asbx
