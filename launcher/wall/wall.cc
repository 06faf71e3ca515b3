#include "launcher/wall/wall.h"

#include <cerrno>
#include <cstdio>

#include "launcher/wall/door.h"

namespace asbx {

void EgressWall::open(long pid, const LaunchPlan& plan) {
  if (!plan.egress.enabled) return;
  int fd = open_door(pid, plan.egress.port);
  // Each refusal is one line on the caller's stderr (never in the agent's output or the capture log).
  auto log = [](const std::string& line) { std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, line.c_str()); };
  proxy_ = std::make_unique<EgressProxy>(fd, plan.egress, log);
}

nlohmann::json EgressWall::close(const LaunchPlan& plan) {
  if (!plan.egress.enabled) return nullptr;
  if (!proxy_) return EgressTally().json();
  proxy_->stop();
  return proxy_->tally().json();
}

}  // namespace asbx
