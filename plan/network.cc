#include "plan/network.h"

#include <cctype>

#include "base/error.h"
#include "base/util.h"

namespace asbx {
namespace {

const char* const kAccepted = "use none, ns:/run/netns/NAME, container:NAME or slirp4netns";

[[noreturn]] void refuse(const std::string& origin, const std::string& spec, const std::string& why) {
  throw Error(ErrorKind::usage, origin + ": '" + spec + "' " + why);
}

bool is_name(const std::string& s) {
  return is_plain_name(s, 128);
}

// A namespace path is taken literally: absolute, no "." or ".." components, no empty ones.
bool is_plain_absolute_path(const std::string& p) {
  if (p.size() < 2 || p[0] != '/' || p.back() == '/') return false;
  for (std::size_t at = 1, next; at <= p.size(); at = next + 1) {
    next = p.find('/', at);
    if (next == std::string::npos) next = p.size();
    std::string part = p.substr(at, next - at);
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

bool is_printable_ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

}  // namespace

NetworkMode parse_network(const std::string& spec, const std::string& origin) {
  // Other bytes cannot travel intact in the create body's JSON, nor be quoted in a message.
  if (!is_printable_ascii(spec))
    throw Error(ErrorKind::usage, origin + ": the network mode must be printable ASCII; " + kAccepted);
  if (spec == "none" || spec == "slirp4netns") return {spec, ""};
  if (spec == "host")
    refuse(origin, spec, "is refused: it would give the agent the seat's own network stack; " + std::string(kAccepted));
  if (spec.rfind("ns:", 0) == 0) {
    std::string path = spec.substr(3);
    if (!is_plain_absolute_path(path))
      refuse(origin, spec, "needs an absolute namespace path without '.' or '..' (e.g. ns:/run/netns/NAME)");
    return {"path", path};
  }
  if (spec.rfind("container:", 0) == 0) {
    std::string name = spec.substr(10);
    if (!is_name(name)) refuse(origin, spec, "needs a container name or id (letters, digits, - _ .)");
    return {"container", name};
  }
  refuse(origin, spec, std::string("is not a network mode: ") + kAccepted);
}

nlohmann::json netns_json(const NetworkMode& mode) {
  nlohmann::json ns = {{"nsmode", mode.nsmode}};
  if (!mode.value.empty()) ns["value"] = mode.value;
  return ns;
}

}  // namespace asbx
