#include "base/seat_config.h"

#include <cstdlib>
#include <pwd.h>
#include <unistd.h>

#include "base/util.h"

namespace asbx {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

UserFacts current_user_facts() {
  UserFacts u;
  u.uid = geteuid();
  u.gid = getegid();
  if (const passwd* pw = getpwuid(u.uid)) {
    u.name = pw->pw_name;
    u.home = pw->pw_dir;
  }
  if (!env_or_empty("HOME").empty()) u.home = env_or_empty("HOME");
  u.xdg_config_home = env_or_empty("XDG_CONFIG_HOME");
  u.xdg_runtime_dir = env_or_empty("XDG_RUNTIME_DIR");
  u.xdg_state_home = env_or_empty("XDG_STATE_HOME");
  return u;
}

std::string default_seat_config_path(const UserFacts& user) {
  return config_base(user) + "/agent-sandbox/seat.toml";
}

std::string expand_home(const std::string& path, const UserFacts& user) {
  if (path == "~") return user.home;
  if (path.rfind("~/", 0) == 0) return user.home + path.substr(1);
  return path;
}

}  // namespace asbx
