// A member's ready file (docs/DECISIONS.md "Issue 37: the warm pool"): its keeper writes
// MEMBER_DIR/ready once the member is started (its stub waiting), so a claim finds the seat's
// members by reading its runtime dir instead of asking podman for a list. The file carries what the labels carry (the
// digest, the keeper, its listener fd, the range slot) and the image's id the member was made from;
// it goes with the member's dir. It is a hint, never a verdict: the claim still links its claim
// file, checks the keeper, takes the listener by its bound name, and asks podman for the member's
// state and the seat image's id before the member is used (launcher/pool/take.h).
#pragma once
#include <string>
#include <vector>

#include "launcher/pool/pool.h"

namespace asbx {

// Written whole under a temporary name and renamed into MEMBER_DIR/ready. Returns "" or why not.
std::string write_ready(const std::string& member_dir, const Member& m);

// The members whose ready file parses, in RUNTIME_DIR/pool-*/ready; `ready` as list_members sets
// it (unclaimed, this boot's, its keeper alive). A file that is not a regular one, larger than
// 4 KiB or not the expected object is skipped.
std::vector<Member> ready_members(const std::string& runtime_dir);

}  // namespace asbx
