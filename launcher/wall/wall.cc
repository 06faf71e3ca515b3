#include "launcher/wall/wall.h"

#include <cerrno>

#include "launcher/lifecycle/diagnostics.h"
#include "launcher/wall/door.h"

namespace asbx {

void EgressWall::open(long pid, const LaunchPlan& plan) {
  if (!plan.egress.enabled) return;
  int fd = open_door(pid, plan.egress.port);
  // Each refusal is one line on the caller's stderr (never in the agent's output or the capture log),
  // through the bounded, non-blocking diagnostics path: a flood of refusals to a caller that does
  // not read can neither block a proxy thread (and with it stop() and the record) nor grow without end.
  auto log = [](const std::string& line) { say(std::string(program_invocation_short_name) + ": " + line); };
  proxy_ = std::make_unique<EgressProxy>(fd, plan.egress, log);
}

nlohmann::json EgressWall::close(const LaunchPlan& plan) {
  if (!plan.egress.enabled) return nullptr;
  if (!proxy_) return EgressTally().json();
  proxy_->stop();
  return proxy_->tally().json();
}

}  // namespace asbx
