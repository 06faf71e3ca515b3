// The user namespace of a rootful session (docs/DECISIONS.md, "A user namespace for every
// session"): the agent's own uid and gid map 1:1 onto the host ids its workspace writes land as
// (runc 1.1 has no idmapped mounts), every other id of the container onto a range that owns
// nothing on the host. Rootless sessions have podman's keep-id namespace instead.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/plan.h"

namespace asbx {

// The host range container ids other than the agent's land in: 0x70000000, 65536 ids, in the
// block systemd documents as unused (between nspawn's container ranges and 2^31), far above
// what useradd hands out in /etc/subuid (100000 up).
constexpr std::int64_t kUsernsHostBase = 0x70000000;
constexpr std::int64_t kUsernsSize = 65536;
// One range per live session (launcher/lifecycle/range_claim.h): slot k's container ids land on
// range_base(k) + id. 1024 slots end at 0x74000000, below 2^31 (which many tools read as negative).
constexpr std::int64_t kUsernsSlots = 1024;
constexpr std::int64_t range_base(std::int64_t slot) { return kUsernsHostBase + slot * kUsernsSize; }

// The map for container ids [0, kUsernsSize): `agent` → itself, every other id → base + id.
std::vector<IdMap> rootful_id_map(std::int64_t agent);

// "UID:GID" → the rootful session's uid and gid maps (usage error on anything else).
void plan_rootful_userns(LaunchPlan& plan);

// user_namespace = "range" (docs/DECISIONS.md, issue 34): container ids [0, kUsernsSize) map onto
// range_base(slot) + id (one range: podman's storage idmaps the image's layers for it), the tmpfs
// mounts the launcher writes into become seat tmpfs owned by the agent's host ids, and every other
// bind goes through an idmapped clone (on-disk agent uid/gid seen as its range ids, every other id
// unmapped) at a staging path in the session dir: plan.isolation.idmapped_binds. Rootless plans
// keep keep-id (unchanged). Throws isolation_unavailable for gVisor (`source`: the seat config).
// `slot`: the session's claimed range (0 in a dry run, before a claim).
void plan_range_userns(LaunchPlan& plan, const std::string& source, std::int64_t slot);

// The agent's ids as the host's kernel sees them: plan.user through uid_map/gid_map (the same ids
// when there is no map). What the launcher compares a stat against and hands its files over to.
struct HostIds {
  unsigned uid = 0;
  unsigned gid = 0;
};
HostIds agent_host_ids(const LaunchPlan& plan);

// The host id a container id lands on under `map` (-1 = unmapped: the kernel's overflow id).
std::int64_t host_id_of(const std::vector<IdMap>& map, std::int64_t container);
// The container id a host id is under `map` (-1 = none: the overflow id inside).
std::int64_t container_id_of(const std::vector<IdMap>& map, std::int64_t host);

}  // namespace asbx
