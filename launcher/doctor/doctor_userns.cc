#include "launcher/doctor/doctor_userns.h"

#include <sys/stat.h>

#include "launcher/lifecycle/idmap_binds.h"
#include "plan/isolation.h"

namespace asbx {

void check_user_namespace(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out) {
  if (user.uid != 0) return;  // rootless: keep-id, the caller's own namespace
  std::string config = seat.path.empty() ? "the seat config" : seat.path;
  std::string wall = oci_runtime_row(seat.oci_runtime).wall;
  if (seat_user_namespace(seat, wall) != "range") {
    std::string whose = seat.user_namespace.empty() ? "the " + seat.oci_runtime + " runtime's default" : config + "'s choice";
    out.push_back({"user_namespace", true, "host (" + whose + "): rootful agents are host uid 1000", ""});
    return;
  }
  std::vector<std::string> roots = seat.workspace_roots.empty() ? std::vector<std::string>{seat.workspace_root} : seat.workspace_roots;
  roots.insert(roots.end(), seat.git_roots.begin(), seat.git_roots.end());
  for (const auto& root : roots) {
    struct stat st{};
    if (::stat(root.c_str(), &st) != 0) {
      out.push_back({"user_namespace", true, root + ": not there (no session can use it yet)", ""});
      continue;
    }
    std::string problem = idmap_problem(root);
    out.push_back({"user_namespace", problem.empty(),
                   root + ": " + (problem.empty() ? "binds are idmapped; each agent is a host uid that owns nothing (1879049192, 65536 on per concurrent session)" : problem),
                   problem.empty() ? "" : "user_namespace = \"host\" in " + config +
                                              " (rootful agents are then host uid 1000), or move the root to a "
                                              "filesystem with idmapped mounts"});
  }
}

}  // namespace asbx
