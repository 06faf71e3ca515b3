// The warm pool's fit rule (docs/DECISIONS.md "Issue 37: the warm pool"): may this session take a
// pre-created member, or must it take the cold path — and the record's reason why. Pure policy: the
// plan and the seat's pool size in, a decision out. What the pool cannot carry yet is listed here
// as rows, one reason each; a member's digest (launcher/podman/pool_fit.h) is checked on top.
#pragma once
#include <string>

#include "base/plan.h"

namespace asbx {

struct WarmFit {
  bool warm = false;
  std::string why;  // "" when warm; else the first row that sent the session to the cold path
};

// pool_size: the members made without a terminal; pool_tty_size: with one (a --tty session's kind).
WarmFit warm_fit(const LaunchPlan& plan, int pool_size, int pool_tty_size);

// True when the rendered seccomp profile names a notify listener (`listenerPath`): runc hands the
// listener the notify fd at init, which for a member is refill time (DECISIONS: a per-member
// holder would have to pass it on at claim) — until that exists such a session goes cold.
bool profile_has_listener(const std::string& profile_text);

}  // namespace asbx
