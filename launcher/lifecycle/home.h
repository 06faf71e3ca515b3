// The container's ephemeral HOME (a tmpfs at /sandbox/home). Between init and start,
// while nothing of the agent has run, the launcher itself writes each credential copy
// into it: no staged copy ever lies on the seat's disk, no wrapper runs before the agent,
// and no file the agent can write decides whether staging worked.
//
// The directory fd stays open after the container ends; it pins the tmpfs, so the
// launcher can tell afterwards whether the CLI rewrote (refreshed) its copy — reading
// agent-written files without following links, non-blocking, bounded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "credtable/credential.h"
#include "credtable/placeholder.h"
#include "launcher/podman/container_root.h"
#include "base/plan.h"
#include "base/result.h"
#include "launcher/state/walk.h"

namespace asbx {

class SessionHome {
 public:
  // Opens HOME inside `root` and writes every credential of the plan, 0600, owned by
  // the container user, then the row's seed files (plan.home_seed) the same way. Throws
  // Error(credential_unresolved) naming the runtime and path.
  void stage(const ContainerRoot& root, const LaunchPlan& plan);
  // After the agent: a copy that is still a regular file but differs from what was
  // written marks the result (credential_refreshed_in_container + a warning).
  void check_refresh(const LaunchPlan& plan, SessionResult& result) const;
  int fd() const { return home_.get(); }
  // Size and digest of each copy as written: state collection keeps such files out.
  const std::vector<CredentialPrint>& staged_prints() const { return prints_; }
  // Inject mode: the placeholders written and the real values they stand for (memory only;
  // the wall puts the real ones on the wire). Empty in copy mode.
  const std::vector<SecretSwap>& swaps() const { return swaps_; }
  void close() { home_ = UniqueFd(); }

 private:
  std::string placeholder_copy(const StagedCredential& cred);
  UniqueFd home_;
  std::vector<std::uint64_t> digests_;  // per plan.credentials entry
  std::vector<CredentialPrint> prints_;
  std::vector<SecretSwap> swaps_;
};

// "/sandbox/home/.codex/auth.json" → ".codex/auth.json"; "" when not under HOME.
std::string relative_to_home(const std::string& container_path);

}  // namespace asbx
