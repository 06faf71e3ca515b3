// One session's tripwire (docs/EGRESS.md, "The tripwire"): armed before the agent starts, it
// holds the catch-all device of the session's own network namespace (tun.h) and the watch on
// the decoys in its HOME (canary_watch.h). One thread reads both: every packet is parsed as data
// (tripwire/answer.h), answered so the agent fails at once, never forwarded, and counted
// (tripwire/tally.h); every decoy opened is counted. The first trip of each kind is one stderr
// line; in kill mode the first trip of any kind calls `on_trip` (the session kills the agent).
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/plan.h"
#include "launcher/wall/canary_watch.h"
#include "tripwire/tally.h"

namespace asbx {

class Tripwire {
 public:
  Tripwire() = default;
  ~Tripwire();
  Tripwire(const Tripwire&) = delete;
  Tripwire& operator=(const Tripwire&) = delete;

  // Nothing unless the plan arms it. Throws Error(tripwire) naming what could not be set up.
  void arm(long container_pid, const LaunchPlan& plan, int home_fd, std::function<void(const std::string&)> on_trip);
  void stop();  // the thread ends, the device goes; idempotent
  // The trip that ended the session (kill mode), "" if none did. Read after stop().
  std::string killed_by() const;
  // The record's `tripwire` object; null when the plan does not arm it.
  nlohmann::json json(const LaunchPlan& plan) const;

  static constexpr int kPacketsPerSecond = 20'000;  // the most a flood costs: past it, packets wait in the device

 private:
  void run();
  void packets();
  void tripped(bool first_of_kind, const std::string& what, bool may_kill);

  UniqueFd device_;
  std::vector<char> packet_;  // one packet at a time, read by the thread
  CanaryWatch canaries_;
  UniqueFd stop_read_, stop_write_;
  TripwireTally tally_;
  std::function<void(const std::string&)> on_trip_;
  TripwireMode mode_ = TripwireMode::off;
  std::string mark_;
  std::atomic<bool> fired_{false};
  std::string killed_by_;  // written once by the thread before it ends
  double tokens_ = kPacketsPerSecond;
  std::int64_t refilled_ms_ = 0;
  std::thread thread_;
};

}  // namespace asbx
