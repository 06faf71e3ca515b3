#include "preflight/nnp.h"

#include <sstream>

#include "base/error.h"

namespace asbx {

int parse_no_new_privs(const std::string& status_text) {
  std::istringstream in(status_text);
  std::string line;
  const std::string key = "NoNewPrivs:";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::string value = line.substr(key.size());
    value.erase(0, value.find_first_not_of(" \t"));
    if (value == "0" || value == "1") return value[0] - '0';
    throw Error(ErrorKind::internal, "/proc/self/status: malformed NoNewPrivs line '" + line + "'");
  }
  throw Error(ErrorKind::internal, "/proc/self/status has no NoNewPrivs line (kernel older than 4.10?)");
}

std::string expected_runtime_dir(unsigned uid) { return "/run/user/" + std::to_string(uid); }

std::string linger_remedy(const std::string& user) { return "loginctl enable-linger " + user; }

std::string bus_remedy(const std::string& user) {
  return "install dbus-user-session, then loginctl enable-linger " + user;
}

std::string runtime_dir_remedy(unsigned uid) {
  return "log in through pam_systemd (ssh does) or export XDG_RUNTIME_DIR=" + expected_runtime_dir(uid);
}

PreflightAction decide_preflight(const PreflightFacts& f) {
  if (!f.no_new_privs || f.uid == 0) return PreflightAction::run_here;
  if (f.reexecd)
    throw Error(ErrorKind::reexec_loop,
                "NoNewPrivs is still 1 in the launcher that systemd-run --user started; refusing to re-exec again "
                "(does the user manager set NoNewPrivileges= for its services?)");
  const std::string why = "NoNewPrivs is 1, so rootless podman cannot map its user namespace here and the launcher "
                          "must re-exec through systemd-run --user, but ";
  if (!f.linger)
    throw Error(ErrorKind::seat_preflight, why + "user " + f.user + " does not linger (no /var/lib/systemd/linger/" +
                                               f.user + "); fix: " + linger_remedy(f.user));
  std::string run = expected_runtime_dir(f.uid);
  if (f.xdg_runtime_dir != run)
    throw Error(ErrorKind::seat_preflight, why + "XDG_RUNTIME_DIR is '" + f.xdg_runtime_dir + "', not " + run +
                                               "; fix: " + runtime_dir_remedy(f.uid));
  if (!f.bus_socket)
    throw Error(ErrorKind::seat_preflight,
                why + "the user bus " + run + "/bus is missing; fix: " + bus_remedy(f.user));
  return PreflightAction::reexec;
}

}  // namespace asbx
