// gVisor: where the session's recorder reads the sentry's refusals (docs/DECISIONS.md, issue 36,
// "Refused calls under gVisor"). The seat's runsc wrapper (packaging/runsc/runsc-wrapper.in) turns
// on the sentry's debug log for `create` exactly when the container's OCI bundle holds a FIFO of
// this name, and names that FIFO as the log: nothing of it reaches a disk, and a reader that falls
// behind makes the sentry's writes wait. The launcher makes it after podman's create (the bundle is
// the container's userdata dir, `StaticDir` in the inspect) and before init, whose `runsc create`
// opens it for writing — which waits for a reader: this one, open from the start.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "base/beneath.h"

namespace asbx {

inline constexpr const char* kSentryLogName = "asbx-sentry.log";

// mkfifo <StaticDir>/asbx-sentry.log (0600) and its read end, non-blocking. Throws
// Error(seccomp_unavailable) naming the path and the cause.
UniqueFd open_sentry_log_fifo(const nlohmann::json& inspect);

}  // namespace asbx
