// The warm pool's "fits" check (docs/DECISIONS.md "Issue 37"): a digest of a member's whole create
// body (launcher/pool/member.h renders it, from a member's plan or from a claiming session's) minus
// what names one session or one member: its name, its labels, its id wherever a path carries it,
// and its user namespace range's host ids. Whatever else reaches podman (a seccomp profile, a user
// namespace mode, the log driver, the image, the limits) is in the digest without being named here,
// so a member built for another body is never handed out.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace asbx {

// The body with name and labels removed, SESSION_ID replaced by "{session}" in every string, and
// every idmapping's host_id set to 0.
nlohmann::json pool_fit_body(const nlohmann::json& create_body, const std::string& session_id);

// "sha256:" + hex of pool_fit_body's canonical JSON (sorted keys, no spaces).
std::string pool_fit_digest(const nlohmann::json& create_body, const std::string& session_id);

}  // namespace asbx
