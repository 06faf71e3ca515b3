// The egress wall of one session: the door opened into the container's namespace before the
// agent starts, the proxy behind it, and the record of what passed and what was refused. In
// inject mode also the session CA (key in memory only), the book of placeholders, and the
// upstream TLS context (docs/CREDENTIALS.md "Inject mode").
#pragma once
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "credtable/placeholder.h"
#include "launcher/podman/container_root.h"
#include "launcher/wall/proxy.h"
#include "launcher/wall/tls.h"
#include "base/plan.h"

namespace asbx {

class EgressWall {
 public:
  ~EgressWall();
  // Nothing unless the plan has egress. Throws Error(egress_unavailable) when the door fails.
  // With inject hosts in the plan: mints the session CA, writes its certificate (only) to
  // /sandbox/ca/session-ca.pem inside `root`, and keeps `swaps` for the proxy.
  void open(long container_pid, const LaunchPlan& plan, const ContainerRoot& root, const std::vector<SecretSwap>& swaps);
  // Stops the proxy (every connection ends); the record for the status file and the ledger:
  // null without egress.
  nlohmann::json close(const LaunchPlan& plan);
  // What inject mode did (all zero in copy mode).
  SecretBook::Counts inject_counts() const { return book_.counts(); }
  // The real values the end-of-session scan looks for.
  std::vector<std::string> real_values() const { return book_.real_values(); }
  int leaves_issued() const { return ca_ ? ca_->leaves_issued() : 0; }

 private:
  InjectParts prepare_inject(const LaunchPlan& plan, const ContainerRoot& root, const std::vector<SecretSwap>& swaps);
  std::unique_ptr<EgressProxy> proxy_;
  std::unique_ptr<SessionCa> ca_;
  SSL_CTX* upstream_ = nullptr;
  SecretBook book_;
};

}  // namespace asbx
