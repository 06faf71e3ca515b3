// The seat-side scratch dir of a session that stages credentials (plan.session_dir):
// created 0700 before the container, holding the read-only credential copies that are
// bound at /sandbox-secrets and the report dir the stage step writes; removed at the end
// (agent-sandbox gc removes leftovers of a killed launcher).
#pragma once
#include "launcher/plan.h"
#include "launcher/result.h"

namespace asbx {

class SessionDir {
 public:
  // Creates nothing when the plan stages no credential. Throws Error(credential_unresolved)
  // when a credential cannot be copied, Error(internal) when the dir cannot be made.
  explicit SessionDir(const LaunchPlan& plan);
  ~SessionDir();
  SessionDir(const SessionDir&) = delete;
  SessionDir& operator=(const SessionDir&) = delete;
  // Reads what the stage step reported: exec failure, stage failure, refresh.
  void apply_report(SessionResult& result) const;

 private:
  void stage(const StagedCredential& cred) const;
  const LaunchPlan& plan_;
  bool created_ = false;
  unsigned uid_ = 0, gid_ = 0;  // the container user, owner of the copies
};

// "codex <sha-staged> <sha-copy>" lines → names of runtimes whose copy changed.
std::vector<std::string> refreshed_runtimes(const std::string& report);

}  // namespace asbx
