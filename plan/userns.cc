#include "plan/userns.h"

#include <cstdio>

#include "base/error.h"
#include "plan/isolation.h"

namespace asbx {

std::vector<IdMap> rootful_id_map(std::int64_t agent) {
  std::vector<IdMap> map;
  if (agent > 0) map.push_back({0, kUsernsHostBase, agent});
  map.push_back({agent, agent, 1});
  if (agent + 1 < kUsernsSize) map.push_back({agent + 1, kUsernsHostBase + agent + 1, kUsernsSize - agent - 1});
  return map;
}

void plan_rootful_userns(LaunchPlan& plan) {
  unsigned uid = 0, gid = 0;
  char rest = 0;
  if (std::sscanf(plan.user.c_str(), "%u:%u%c", &uid, &gid, &rest) != 2 || uid == 0 || uid >= kUsernsSize ||
      gid == 0 || gid >= kUsernsSize)
    throw Error(ErrorKind::usage, "container user '" + plan.user + "': a rootful session's agent must be a uid:gid "
                                  "between 1 and " + std::to_string(kUsernsSize - 1));
  plan.uid_map = rootful_id_map(uid);
  plan.gid_map = rootful_id_map(gid);
}

void plan_range_userns(LaunchPlan& plan, const std::string& source, std::int64_t slot) {
  if (plan.rootless) return;  // keep-id: the caller's own namespace already
  plan.isolation.user_namespace = "range";
  if (plan.isolation.wall != "runc")
    throw Error(ErrorKind::isolation_unavailable,
                "gVisor (runsc): user_namespace = \"range\" in " + source +
                    ": the sandbox does not start in a user namespace on this seat (runsc: \"error setting up "
                    "chroot\"); nothing was created");
  // A namespace podman did not make is the seat's user namespace's: runc cannot mount a sysfs of the
  // container's own there and binds the seat's /sys (its interfaces, every cgroup) in; it is masked.
  plan.isolation.mask_sys = plan.network.rfind("ns:", 0) == 0 || plan.network.rfind("container:", 0) == 0;
  unsigned uid = 0, gid = 0;
  std::sscanf(plan.user.c_str(), "%u:%u", &uid, &gid);
  if (slot < 0 || slot >= kUsernsSlots)
    throw Error(ErrorKind::internal, "user namespace range " + std::to_string(slot) + " is not one of the seat's " +
                                         std::to_string(kUsernsSlots));
  plan.uid_map = plan.gid_map = {{0, range_base(slot), kUsernsSize}};
  HostIds host = agent_host_ids(plan);
  if (uid == 0 || uid >= kUsernsSize || gid == 0 || gid >= kUsernsSize)
    throw Error(ErrorKind::usage, "container user '" + plan.user + "': a session in a user namespace must run as a "
                                  "uid:gid between 1 and " + std::to_string(kUsernsSize - 1));
  std::size_t first_seat = plan.isolation.seat_tmpfs.size();
  move_tmpfs_to_seat(plan, host.uid, host.gid);
  auto on_seat = [&](const Mount& m) {
    for (std::size_t i = first_seat; i < plan.isolation.seat_tmpfs.size(); ++i)
      if (plan.isolation.seat_tmpfs[i].source == m.source) return true;
    return false;
  };
  int n = 0;
  for (const auto& m : plan.mounts)
    if (m.type == "bind" && !on_seat(m))
      plan.isolation.idmapped_binds.push_back(
          Mount{"bind", m.source, plan.session_dir + "/tmpfs/idmap-" + std::to_string(n++), {}});
}

HostIds agent_host_ids(const LaunchPlan& plan) {
  unsigned uid = 0, gid = 0;
  std::sscanf(plan.user.c_str(), "%u:%u", &uid, &gid);
  if (plan.uid_map.empty()) return {uid, gid};
  return {static_cast<unsigned>(host_id_of(plan.uid_map, uid)), static_cast<unsigned>(host_id_of(plan.gid_map, gid))};
}

std::int64_t host_id_of(const std::vector<IdMap>& map, std::int64_t container) {
  for (const auto& m : map)
    if (container >= m.container && container < m.container + m.size) return m.host + (container - m.container);
  return -1;
}

std::int64_t container_id_of(const std::vector<IdMap>& map, std::int64_t host) {
  for (const auto& m : map)
    if (host >= m.host && host < m.host + m.size) return m.container + (host - m.host);
  return -1;
}

}  // namespace asbx
