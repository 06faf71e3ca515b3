// The agent's deadlines while it runs (launcher/lifecycle/session.cc): its --timeout, the grace a
// forwarded signal gives it, and the kill when either passes. The first cause wins the record's
// `cause` ("signal" with its number, or "timeout"); once the kill is sent nothing is due any more.
#pragma once
#include <cstdint>

#include "base/result.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/podman/podman_api.h"

namespace asbx {

class AgentDeadlines {
 public:
  AgentDeadlines(PodmanApi& api, SessionResult& result, std::int64_t grace_ms)
      : api_(api), result_(result), grace_ms_(grace_ms) {}
  void start(std::int64_t started_ms, std::int64_t timeout_ms);  // timeout_ms 0: none
  // The pump's signal, deadline, ending and draining hooks (pump.h); output and winch are the caller's.
  void hook(PumpHooks& h);
  std::int64_t timeout_at() const { return timeout_at_; }

 private:
  void forward_signal(int sig);
  void deadline_passed();
  std::int64_t next() const;

  PodmanApi& api_;
  SessionResult& result_;  // its container_id is the container signalled
  std::int64_t grace_ms_;
  std::int64_t timeout_at_ = -1;
  std::int64_t grace_until_ = -1;
  bool kill_sent_ = false;
};

}  // namespace asbx
