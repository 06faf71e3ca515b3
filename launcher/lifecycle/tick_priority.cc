#include "launcher/lifecycle/tick_priority.h"

#include <cerrno>
#include <cstring>
#include <sched.h>

namespace asbx {
namespace {

constexpr char kRaised[] = "SCHED_FIFO 1";

int set_policy(int policy, int priority) {
  sched_param p{};
  p.sched_priority = priority;
  return ::sched_setscheduler(0, policy, &p) == 0 ? 0 : errno;  // 0: the calling thread
}

}  // namespace

std::string raise_tick_priority() {
  int err = set_policy(SCHED_FIFO | SCHED_RESET_ON_FORK, 1);
  return err == 0 ? kRaised : std::string("normal (SCHED_FIFO refused: ") + std::strerror(err) + ")";
}

bool tick_priority_raised(const std::string& how) { return how == kRaised; }

NormalPriority::NormalPriority(bool raised) : raised_(raised && set_policy(SCHED_OTHER, 0) == 0) {}

NormalPriority::~NormalPriority() {
  if (raised_) (void)set_policy(SCHED_FIFO | SCHED_RESET_ON_FORK, 1);
}

}  // namespace asbx
