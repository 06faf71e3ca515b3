// The warm pool's "fits" check (docs/DECISIONS.md "Issue 37"): a digest of the whole rendered create
// body minus the parts a claim binds per session. Whatever else reaches podman (a seccomp profile,
// a user namespace, the log driver, the OCI runtime, the image, limits on disk) is in the digest
// without being named here, so a member built for another body is never handed out.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace asbx {

// The body with its per-session parts removed: name, command, env, labels, work_dir, the
// resource limits (set through update at claim) and the bind mounts (bound at claim).
nlohmann::json pool_fit_body(const nlohmann::json& create_body);

// "sha256:" + hex of pool_fit_body's canonical JSON (sorted keys, no spaces).
std::string pool_fit_digest(const nlohmann::json& create_body);

}  // namespace asbx
