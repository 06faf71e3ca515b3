// The disk watcher's ticks run at SCHED_FIFO priority 1 when the seat allows it (a root launcher,
// or an RLIMIT_RTPRIO): on a loaded seat a thread asleep between 20 ms ticks woke 65-150 ms late at
// normal priority, and a writer at page-cache speed went that much further past its budget. A tick
// is a few statvfs calls; a walk is not, so walks run at normal priority (NormalPriority).
// docs/RESOURCES.md "Disk".
#pragma once
#include <string>

namespace asbx {

// For the calling thread: "SCHED_FIFO 1" when granted, else "normal (why)"; nothing is refused.
std::string raise_tick_priority();
bool tick_priority_raised(const std::string& how);

// While it lives, the calling thread runs at normal priority (when `raised`); then raised again.
class NormalPriority {
 public:
  explicit NormalPriority(bool raised);
  ~NormalPriority();
  NormalPriority(const NormalPriority&) = delete;
  NormalPriority& operator=(const NormalPriority&) = delete;

 private:
  bool raised_;
};

}  // namespace asbx
