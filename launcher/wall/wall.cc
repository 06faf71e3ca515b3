#include "launcher/wall/wall.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>

#include "base/beneath.h"
#include "base/error.h"
#include "launcher/lifecycle/diagnostics.h"
#include "launcher/wall/door.h"

namespace asbx {

EgressWall::~EgressWall() {
  proxy_.reset();
  if (upstream_) free_context(upstream_);
}

void EgressWall::open(long pid, const LaunchPlan& plan, const ContainerRoot& root, const std::vector<SecretSwap>& swaps) {
  // gVisor: a namespace of the session's own has lo as runc leaves it, up (door.h).
  if (plan.isolation.wall == "gvisor" && plan.network == "none" && !plan.egress.enabled) bring_loopback_up(pid);
  if (!plan.egress.enabled) return;
  InjectParts inject = prepare_inject(plan, root, swaps);
  int fd = open_door(pid, plan.egress.port);
  // Each refusal is one line on the caller's stderr (never in the agent's output or the capture log),
  // through the bounded, non-blocking diagnostics path: a flood of refusals to a caller that does
  // not read can neither block a proxy thread (and with it stop() and the record) nor grow without end.
  auto log = [](const std::string& line) { say(std::string(program_invocation_short_name) + ": " + line); };
  proxy_ = std::make_unique<EgressProxy>(fd, plan.egress, log, resolve_on_seat, std::move(inject));
}

// The CA for exactly the plan's inject and refresh hosts; its certificate into the container.
InjectParts EgressWall::prepare_inject(const LaunchPlan& plan, const ContainerRoot& root,
                                       const std::vector<SecretSwap>& swaps) {
  if (plan.egress.inject.empty() || swaps.empty()) return {};
  std::vector<std::string> hosts;
  for (const auto& h : plan.egress.inject) hosts.push_back(h.host);
  ca_ = std::make_unique<SessionCa>(hosts, plan.egress.leaf_lifetime_s);
  upstream_ = make_upstream_context(plan.egress.upstream_ca);
  UniqueFd dir(open_under(root.fd(), kSessionCaDir, O_PATH | O_DIRECTORY, true, true));
  if (!dir) throw Error(ErrorKind::egress_unavailable, std::string("cannot open ") + kSessionCaDir + " in the container: " + std::strerror(errno));
  std::string why = write_new_file(dir.get(), "session-ca.pem", ca_->cert_pem(), 0644, false, 0, 0);
  if (!why.empty()) throw Error(ErrorKind::egress_unavailable, std::string("cannot write ") + kSessionCaPath + ": " + why);
  for (const auto& s : swaps) book_.add(s.placeholder, s.real, on_the_wire(s.field));
  InjectParts parts{ca_.get(), upstream_, &book_, swaps, 0, 0};
  for (const auto& c : plan.credentials) {
    if (c.mode != "inject" || !c.lifetime.expires_unix) continue;
    parts.access_expires_unix = *c.lifetime.expires_unix;
    if (c.lifetime.refresh_at_unix) parts.refresh_skew_s = *c.lifetime.expires_unix - *c.lifetime.refresh_at_unix;
  }
  return parts;
}

nlohmann::json EgressWall::close(const LaunchPlan& plan) {
  if (!plan.egress.enabled) return nullptr;
  if (!proxy_) return EgressTally().json();
  proxy_->stop();
  return proxy_->tally().json();
}

}  // namespace asbx
