// The registry of seat hosts (TOML, `[[host]]` tables). Unknown keys, wrong types,
// missing required keys and duplicate names are errors naming file:line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "plan/config.h"

namespace asbx {

struct SeatHost {
  std::string name;
  std::string address;
  int port = 22;
  std::string user;
  std::vector<std::string> roles;
  std::string host_key;       // "TYPE BASE64 [comment]"; either this or known_hosts
  std::string known_hosts;    // an OpenSSH known_hosts file
  std::string identity_file;  // "" = ssh-agent only
  std::int64_t capacity = 1;  // max concurrent sessions on the seat
  bool has_role(const std::string& role) const;
};

struct Registry {
  std::string path;
  std::vector<SeatHost> hosts;  // file order: the order in which seats are tried
};

std::string default_registry_path(const UserFacts& user);
Registry parse_registry(const std::string& text, const std::string& path);
// Throws Error(config) when the file cannot be read.
Registry load_registry(const std::string& path);
// The seats to try: `host` alone when given (Error(no_seat) if it is not in the registry),
// otherwise every agent-seat host in file order.
std::vector<SeatHost> seat_candidates(const Registry& registry, const std::string& host);

}  // namespace asbx
