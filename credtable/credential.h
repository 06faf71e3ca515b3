// Turning --runtime/--account/--credential into credential references (paths, never content).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "credtable/credtable.h"
#include "base/plan.h"
#include "base/request.h"

namespace asbx {

inline constexpr const char* kContainerHome = "/sandbox/home";

// The credential of `row` for `account` (or the explicit path): resolved with realpath,
// a readable regular file. Empty when the row is optional and its default file is absent.
// Throws Error(credential_unresolved) naming the runtime and the path, never content.
std::vector<StagedCredential> resolve_credentials(const CredRow& row, const std::string& account,
                                                  const std::string& explicit_path, const UserFacts& user);
// Reads each credential's lifetime (credtable/lifetime.h) and applies the seat's rule:
// Error(credential_expiring) before anything exists, or a warning in plan.credential_warnings.
// inject_wanted: the session goes through the wall and the seat allows inject mode; each
// credential the row can inject (and whose file has the row's shape) gets mode "inject", and its
// lifetime is judged by the real token's expiry (credtable/lifetime.h).
void plan_lifetimes(const CredRow& row, const std::string& account, const SeatConfig& seat, const SessionFacts& facts,
                    LaunchPlan& plan, bool inject_wanted = false);
// Fills plan.runtime, plan.credentials and the env names of the row. Credentials add no
// mount: the launcher copies each one into the container's HOME itself (launcher/lifecycle/home.cc).
void plan_runtime(const Request& req, const SeatConfig& seat, const UserFacts& user, const SessionFacts& facts,
                  LaunchPlan& plan);

// A credential file is at most this large (larger is credential_unresolved).
inline constexpr std::int64_t kMaxCredentialBytes = 1 << 20;
// The host original, read only (O_NOATIME where permitted). Throws credential_unresolved.
std::string read_credential(const StagedCredential& cred);

}  // namespace asbx
