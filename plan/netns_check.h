// Which network namespaces a caller's --network may reach (docs/AGENTS.md, "Network").
// Syntax is parse_network's (pure); this is the policy that needs the seat's facts:
//   ns:PATH         only a namespace the seat config lists (netns_allowed), or one directly
//                   in /run/netns/, opened without following any symlink, that is a real
//                   network namespace (nsfs) and not the seat's own (not the identity of
//                   /proc/1/ns/net nor /proc/self/ns/net: a bind mount of either is refused)
//   container:NAME  only a container the seat config lists (network_containers)
// The seat config's own `network` value is the owner's policy and is not checked here.
#pragma once
#include <string>
#include <vector>

#include "plan/config.h"

namespace asbx {

// Throws Error(usage) naming `origin` and the reason when `spec` may not be reached.
void check_network_reach(const std::string& spec, const SeatConfig& seat, const std::string& origin);

}  // namespace asbx
