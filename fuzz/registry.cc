// The seat registry (TOML, launcher/remote/registry.cc): a registry or Error(config) naming file:line;
// every accepted host has a name, an address, a user, a pinned host key and a port in range.
#include "fuzz/fuzz.h"
#include "base/error.h"
#include "launcher/remote/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  try {
    asbx::Registry reg = asbx::parse_registry(asbx::fuzz::text(data, size), "registry.toml");
    for (const auto& h : reg.hosts) {
      if (h.name.empty() || h.address.empty() || h.user.empty()) violated("host accepted without name/address/user");
      if (h.host_key.empty() && h.known_hosts.empty()) violated("host accepted without a pinned key");
      if (h.port < 1 || h.port > 65535 || h.capacity < 1 || h.capacity > 256) violated("port/capacity out of range");
    }
  } catch (const asbx::Error& e) {
    asbx::fuzz::message_fits_json(e.what());
    if (e.kind() != asbx::ErrorKind::config) violated(std::string("not a config error: ") + e.what());
    if (std::string(e.what()).rfind("registry.toml", 0) != 0) violated(std::string("no file name: ") + e.what());
  }
  return 0;
}
