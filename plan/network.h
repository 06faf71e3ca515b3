// The session's network mode: which network namespace the container gets. Pure.
//
// Accepted values, from least to most reach (docs/AGENTS.md, "Network"):
//   none            loopback only, nothing else (the default)
//   ns:PATH         join an existing network namespace, e.g. /run/netns/NAME that the seat's
//                   admin set up with exactly the route to the model endpoint
//   container:NAME  join another container's network namespace (e.g. a model proxy's)
//   slirp4netns     user-mode NAT: outbound to whatever the seat itself reaches
// Refused: "host" (the seat's own stack, its loopback services and abstract unix sockets),
// "bridge"/"private" (CNI/netavark networks are not part of the seat's design).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace asbx {

struct NetworkMode {
  std::string nsmode;  // libpod's netns.nsmode: none, path, container, slirp4netns
  std::string value;   // the path or the container for "path" / "container"
  bool operator==(const NetworkMode&) const = default;
};

// Throws Error(usage) naming `origin` (e.g. "--network") when `spec` is not accepted.
NetworkMode parse_network(const std::string& spec, const std::string& origin);
// The create body's "netns" object.
nlohmann::json netns_json(const NetworkMode& mode);

}  // namespace asbx
