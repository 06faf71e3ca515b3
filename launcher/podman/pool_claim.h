// The warm pool's claim (docs/DECISIONS.md "Issue 37"): a member is a session's once its claim
// file `<pool dir>/<member id>.claim` exists. podman's rename cannot arbitrate: the service turns
// the name into the container id once and renames by id, so concurrent renames of one member all
// succeed and the last name stays (CI saw 3 of 8 win). The claim file is written whole under a
// temporary name and linked into place; link(2) fails with EEXIST when another claimer's is there,
// so exactly one wins, and gc reads the winner's pid and start time from the first moment the file
// exists. Nothing calls it until the pool exists.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace asbx {

struct PoolClaim {
  long pid = 0;
  std::int64_t started_unix = 0;
  std::int64_t timeout_ms = 0;  // the session's --timeout (gc's backstop, as a cold container's label)
  std::string session;  // the claiming session's id; "" for gc's or a fill's claim before a removal
};

// true: this claimer holds the member now; false: another claim was there first.
// Throws Error(internal) for a member id that is not 64 hex digits or any other OS error.
bool claim_member(int pool_dir_fd, const std::string& member_id, const PoolClaim& who);

// The claim on a member, or nullopt when there is none (or it cannot be parsed: gc then judges the
// member by its labels alone). Never follows a symlink.
std::optional<PoolClaim> read_claim(int pool_dir_fd, const std::string& member_id);

}  // namespace asbx
