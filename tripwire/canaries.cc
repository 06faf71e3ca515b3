#include "tripwire/canaries.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "credtable/credential.h"

namespace asbx {
namespace {

constexpr std::size_t kMaxCanaries = 64;
constexpr std::size_t kMaxParts = 8;
const char* const kNpmUserConfig = "/sandbox/home/.config/npm/npmrc";

bool is_under(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string home_relative(const std::string& container_path) {
  std::string home = std::string(kContainerHome) + "/";
  return container_path.rfind(home, 0) == 0 ? container_path.substr(home.size()) : "";
}

[[noreturn]] void collides(const std::string& source, const std::string& canary, const std::string& what) {
  throw Error(ErrorKind::config, source + ": tripwire_canaries: '" + canary + "' would sit on " + what +
                                     "; leave it out of the list");
}

void check_collisions(const std::vector<std::string>& canaries, const LaunchPlan& plan, const std::string& source) {
  for (const auto& c : canaries) {
    for (const auto& cred : plan.credentials) {
      std::string rel = home_relative(cred.copy_to);
      if (!rel.empty() && (is_under(c, rel) || is_under(rel, c))) collides(source, c, "the " + cred.runtime + " credential copy");
    }
    for (const auto& s : plan.state.paths)
      if (is_under(c, s) || is_under(s, c)) collides(source, c, "the state path '" + s + "'");
    for (const auto& other : canaries)
      if (&other != &c && is_under(other, c)) collides(source, c, "the decoy '" + other + "'");
  }
}

// A decoy's directory counts as listed when it holds decoys only: no subdirectory, nothing else
// the launcher puts there. HOME itself never does (everything lists it).
std::vector<std::string> listed_dirs(const std::vector<std::string>& canaries) {
  std::vector<std::string> out;
  for (const auto& c : canaries) {
    std::string dir = parent_of(c);
    if (dir.empty() || std::find(out.begin(), out.end(), dir) != out.end()) continue;
    bool only_decoys = true;
    for (const auto& other : canaries)
      if (is_under(other, dir) && parent_of(other) != dir) only_decoys = false;
    if (only_decoys) out.push_back(dir);
  }
  return out;
}

std::string gid_of(const std::string& user) {
  auto colon = user.find(':');
  return colon == std::string::npos ? user : user.substr(colon + 1);
}

}  // namespace

const std::vector<std::string>& default_canaries() {
  static const std::vector<std::string> list = {
      ".ssh/id_rsa",        ".ssh/id_ed25519",  ".aws/credentials", ".npmrc",
      ".config/gh/hosts.yml", ".docker/config.json", ".git-credentials", ".kube/config",
      ".pypirc",            ".config/gcloud/application_default_credentials.json",
  };
  return list;
}

std::string canary_path_problem(const std::string& path) {
  if (path.empty() || path.size() > 255) return "must be 1 to 255 characters";
  if (path[0] == '/' || path.back() == '/') return "must be a file under HOME (no leading or trailing '/')";
  std::size_t parts = 0, at = 0;
  for (std::size_t next; at <= path.size(); at = next + 1) {
    next = path.find('/', at);
    if (next == std::string::npos) next = path.size();
    std::string part = path.substr(at, next - at);
    if (part.empty() || part == "." || part == "..") return "has an empty, '.' or '..' part";
    for (char c : part)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
        return "may hold only letters, digits, '.', '_', '-' and '/'";
    if (++parts > kMaxParts) return "has more than 8 parts";
  }
  return "";
}

TripwirePlan plan_tripwire(const TripwireSeat& seat, const LaunchPlan& plan, const std::string& source) {
  TripwirePlan t;
  t.mode = seat.mode;
  t.source = source;
  if (seat.mode == TripwireMode::off) return t;
  t.network = plan.network == "none";
  t.canaries = seat.canaries.value_or(default_canaries());
  if (t.canaries.size() > kMaxCanaries) throw Error(ErrorKind::config, source + ": tripwire_canaries: at most 64 decoys");
  check_collisions(t.canaries, plan, source);
  t.listed_dirs = listed_dirs(t.canaries);
  if (t.network) t.ping_group_range = gid_of(plan.user) + " " + gid_of(plan.user);
  // npm (and pnpm) read ~/.npmrc on every run: their user config moves, the decoy stays for a
  // payload that reads the path itself.
  if (std::find(t.canaries.begin(), t.canaries.end(), ".npmrc") != t.canaries.end())
    t.env.emplace_back("NPM_CONFIG_USERCONFIG", kNpmUserConfig);
  return t;
}

}  // namespace asbx
