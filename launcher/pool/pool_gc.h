// What gc and ps make of warm pool members (docs/DECISIONS.md "Issue 37: the warm pool"). An
// unclaimed member is judged by its labels, which name its keeper; a claimed one by its claim file,
// which names the session's launcher and id. A claim file whose container is gone goes after a minute.
#pragma once
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "launcher/podman/gc.h"

namespace asbx {

// A member with a claim (in the runtime dir its label names): its launcher pid, start and session
// become the claim's.
void apply_pool_claim(LiveSession& s);

// Links gc's own claim (no session) on an unclaimed member before removing it: false when a session's
// claim was there first (the member is that session's now; leave it).
bool claim_for_removal(const LiveSession& s);

// Whether a member under RUNTIME_DIR still runs (its ready file's init lives) while the session
// that claimed it has lost its launcher: a killed warm session's orphan. Reads only the seat's files.
bool dead_claim_under(const std::string& runtime_dir, const std::function<bool(long pid, std::int64_t started_unix)>& alive);

void drop_pool_claim(const std::string& runtime_dir, const std::string& container_id);

// Claim files older than a minute whose container is not in LISTED (ids); one line per file removed.
std::vector<std::string> collect_stale_claims(const std::string& runtime_dir, const std::set<std::string>& listed,
                                              std::int64_t now_unix);

}  // namespace asbx
