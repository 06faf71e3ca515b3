// The session's seccomp profile: the seat's installed podman default (read at plan time, never a
// copy), with every call of seccomp/table.h taken out of the default's entries and refused by the
// table's own rules. What the default refuses stays refused: the table's conditional allows (clone
// without CLONE_NEW*, socket of the allowed families/types/protocols, socketpair AF_UNIX, send/recv
// without MSG_OOB, setsockopt but two options, personality's two values) are added only for a call
// the default allows; otherwise the call stays refused whole. Every allow is disjoint from every
// refusal (libseccomp drops a conditional refusal that overlaps an allow). The x86_64 (and every)
// architecture gets no sub-architecture: an i386 or x32 call is killed (SIGSYS).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "base/seccomp_plan.h"

namespace asbx {

// The profile podman takes (containers/common's JSON). Throws Error(seccomp_unavailable) when
// `base` is no profile (no defaultAction or no syscalls list).
// `wall`: the session's (plan/isolation.h); a row not for it stays as the default has it.
// `listener` (a unix socket path, "" = none): the recorded rows become SCMP_ACT_NOTIFY and the
// profile names the socket (OCI listenerPath) where runc hands the session its notify fd.
nlohmann::json render_seccomp_profile(const nlohmann::json& base, const std::string& wall = "runc",
                                      const std::string& listener = "");

// The plan's part: `base_text` is the default's content as read from `base_path` ("" = unreadable);
// the file is the session's own, in the runtime dir, named by the session and the digest. The
// digest is the rules' without a listener (what `seccomp-profile` prints and a kube node takes);
// with `listener` the file's recorded rows notify it instead (the same calls, the same errnos).
SeccompPlan plan_seccomp(const std::string& base_path, const std::string& base_text, const std::string& runtime_dir,
                         const std::string& session_id, const std::string& wall = "runc", const std::string& listener = "");

}  // namespace asbx
