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
void apply_pool_claim_at(LiveSession& s, int pool_dir);  // POOL_DIR: its runtime dir's .pool, or -1 (none)

// The same for a member of another seat's RUNTIME_DIR, read only beneath a trusted walk of it
// (launcher/lifecycle/runtime_dir.h), never by path. False when the dir is there but someone else
// could have put what is in it: its claim is unknown, so gc leaves the member.
bool apply_foreign_pool_claim(LiveSession& s, const std::string& runtime_dir);

// Kills an idle member's keeper (pid and start checked, through a pidfd) and waits up to a second
// for it to end, so that its owner file no longer holds the member's session dir.
void end_keeper(const LiveSession& s, const std::function<bool(long pid, std::int64_t started_unix)>& alive);

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
