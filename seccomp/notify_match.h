// What the recorder makes of one notification from the kernel's seccomp filter (pure): which row
// of seccomp/table.h the call matched, by architecture, call number and, for socket, the family in
// its first argument; what the caller gets (the row's errno); and how the record names it, from
// the table's names only (never a string the agent chose).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "seccomp/table.h"

namespace asbx {

constexpr int kFamilyBuckets = kAfMax + 1;  // one per family below AF_MAX, then every value at or above it

struct RefusedCall {
  int call = -1;                  // index in recorded_call_names(); -1: no recorded row (answered EPERM, "other")
  int family = -1;                // socket: its bucket (0 .. kAfMax)
  std::uint64_t clone_flags = 0;  // clone: the CLONE_NEW* flags asked for
  int errno_value = 1;            // what the caller gets (the row's errno; EPERM when no row)
  // gVisor's log only: the call's rows decide by its arguments, which the log does not carry, so
  // the refusal may be the agent's own filter's (seccomp/sentry_log.h): counted apart.
  bool by_arguments = false;
};

// `audit_arch` and `nr` as seccomp_data has them; `args` its six arguments.
RefusedCall match_refused_call(std::uint32_t audit_arch, std::int32_t nr, const std::uint64_t* args);

// A refusal the gVisor sentry logged (seccomp/sentry_log.h): the call by its number as the filter
// saw it (native, or x32's with bit 30: the sentry implements neither x32 nor i386, but its filter
// refuses them by number), without arguments (no family, no clone flags: "socket", "clone"); call
// -1 when no recorded row names it (podman's default action, or an unrecorded row: not counted, as
// under runc). `by_arguments` when the call's rows depend on its arguments.
RefusedCall match_sentry_refusal(long nr);

// Every call of the table's recorded rows, in table order, each once: the record's keys.
const std::vector<std::string>& recorded_call_names();
// "AF_ALG"; the last bucket is "AF_46+" (any value at or above AF_MAX, high bits included).
std::string family_bucket_name(int bucket);
// "unshare", "socket(AF_ALG)", "clone(CLONE_NEWUSER|CLONE_NEWNET)", "other".
std::string describe_refused(const RefusedCall& call);

}  // namespace asbx
