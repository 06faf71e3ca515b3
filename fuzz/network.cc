// The network mode (launcher/network.cc parse_network), from --network or the seat config.
// Accepted modes are exactly none, slirp4netns, a plain absolute ns: path or a container name;
// "host" and everything else fail with Error(usage) naming the origin.
#include "fuzz/fuzz.h"
#include "base/error.h"
#include "plan/network.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  const std::string spec = asbx::fuzz::text(data, size);
  try {
    asbx::NetworkMode mode = asbx::parse_network(spec, "--network");
    if (spec == "host") violated("host accepted");
    if (mode.nsmode == "path") {
      if (mode.value.empty() || mode.value[0] != '/' || mode.value.find("/../") != std::string::npos ||
          mode.value.find("/./") != std::string::npos || mode.value.find("//") != std::string::npos)
        violated("namespace path not plain: " + mode.value);
    } else if (mode.nsmode == "container") {
      if (mode.value.empty() || mode.value.find('/') != std::string::npos) violated("bad container " + mode.value);
    } else if (mode.nsmode != "none" && mode.nsmode != "slirp4netns") {
      violated("unknown nsmode " + mode.nsmode);
    }
    asbx::netns_json(mode).dump();
  } catch (const asbx::Error& e) {
    asbx::fuzz::message_fits_json(e.what());
    if (e.kind() != asbx::ErrorKind::usage) violated(std::string("not a usage error: ") + e.what());
    if (std::string(e.what()).rfind("--network: ", 0) != 0) violated(std::string("origin missing: ") + e.what());
  }
  return 0;
}
