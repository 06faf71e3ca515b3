#include "plan/userns.h"

#include <cstdio>

#include "base/error.h"

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

std::int64_t host_id_of(const std::vector<IdMap>& map, std::int64_t container) {
  for (const auto& m : map)
    if (container >= m.container && container < m.container + m.size) return m.host + (container - m.container);
  return -1;
}

}  // namespace asbx
