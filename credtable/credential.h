// Turning --runtime/--account/--credential into staged credential references, and the
// stage step that copies them into the ephemeral HOME inside the container.
#pragma once
#include <string>
#include <vector>

#include "credtable/credtable.h"
#include "launcher/plan.h"
#include "launcher/request.h"

namespace asbx {

inline constexpr const char* kSecretsDir = "/sandbox-secrets";  // read-only staged files
inline constexpr const char* kReportDir = "/sandbox-report";    // stage step → launcher
inline constexpr const char* kContainerHome = "/sandbox/home";

// The credential of `row` for `account` (or the explicit path): resolved with realpath,
// a readable regular file. Empty when the row is optional and its default file is absent.
// Throws Error(credential_unresolved) naming the runtime and the path, never content.
std::vector<StagedCredential> resolve_credentials(const CredRow& row, const std::string& account,
                                                  const std::string& explicit_path, const UserFacts& user);
// Where the launcher puts the read-only copy it binds at staged_at.
std::string staged_host_path(const std::string& session_dir, const StagedCredential& cred);
// Fills plan.runtime, plan.credentials, their mounts and the env names of the row.
void plan_runtime(const Request& req, const SeatConfig& seat, const UserFacts& user, const SessionFacts& facts,
                  LaunchPlan& plan);
// The container's command: argv as given, or, with credentials, wrapped by the stage
// step: /bin/bash -c STAGE_SCRIPT asbx-stage RUNTIME STAGED COPY ... -- argv...
std::vector<std::string> container_command(const LaunchPlan& plan);
const std::string& stage_script();

}  // namespace asbx
