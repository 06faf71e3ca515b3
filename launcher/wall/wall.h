// The egress wall of one session: the door opened into the container's namespace before the
// agent starts, the proxy behind it, and the record of what passed and what was refused.
#pragma once
#include <memory>

#include <nlohmann/json.hpp>

#include "launcher/wall/proxy.h"
#include "base/plan.h"

namespace asbx {

class EgressWall {
 public:
  // Nothing unless the plan has egress. Throws Error(egress_unavailable) when the door fails.
  void open(long container_pid, const LaunchPlan& plan);
  // Stops the proxy (every connection ends); the record for the status file and the ledger:
  // null without egress.
  nlohmann::json close(const LaunchPlan& plan);

 private:
  std::unique_ptr<EgressProxy> proxy_;
};

}  // namespace asbx
