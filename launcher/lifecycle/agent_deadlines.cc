#include "launcher/lifecycle/agent_deadlines.h"

#include <csignal>

namespace asbx {

void AgentDeadlines::start(std::int64_t started_ms, std::int64_t timeout_ms) {
  if (timeout_ms > 0) timeout_at_ = started_ms + timeout_ms;
}

void AgentDeadlines::hook(PumpHooks& h) {
  h.on_signal = [this](int sig) { forward_signal(sig); };
  h.deadline = [this] { return next(); };
  h.on_deadline = [this] { deadline_passed(); };
  // Output still queued when the agent has stopped is delivered, unless the session was
  // killed or its timeout passes meanwhile: a caller that stopped reading cannot hold it.
  h.ending = [this] { return kill_sent_ || grace_until_ >= 0; };
  h.keep_draining = [this] {
    return !kill_sent_ && grace_until_ < 0 && (timeout_at_ < 0 || steady_ms() < timeout_at_);
  };
}

std::int64_t AgentDeadlines::next() const {
  if (kill_sent_) return -1;
  if (grace_until_ >= 0) return grace_until_;
  return timeout_at_;
}

void AgentDeadlines::forward_signal(int sig) {
  if (result_.cause.empty()) {
    result_.cause = "signal";
    result_.signal = sig;
  }
  api_.kill(result_.container_id, sig);
  if (grace_until_ < 0) grace_until_ = steady_ms() + grace_ms_;
}

void AgentDeadlines::deadline_passed() {
  if (grace_until_ < 0 && result_.cause.empty()) result_.cause = "timeout";
  kill_sent_ = true;
  api_.kill(result_.container_id, SIGKILL);
}

}  // namespace asbx
