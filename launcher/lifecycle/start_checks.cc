#include "launcher/lifecycle/start_checks.h"

#include <cstdio>
#include <sys/stat.h>

#include "base/error.h"
#include "plan/isolation.h"
#include "plan/userns.h"

namespace asbx {

namespace {
const char* kIgnoredLimits = "Resource limits are not supported and ignored";
const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}  // namespace

std::string container_path_env(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("Config") || !state["Config"].contains("Env")) return kDefaultPath;
  for (const auto& kv : state["Config"]["Env"])
    if (kv.is_string() && kv.get<std::string>().rfind("PATH=", 0) == 0) return kv.get<std::string>().substr(5);
  return kDefaultPath;
}

// A concurrent session rewriting a shared dir between the check and the mount is one way.
void verify_mounts(const ContainerRoot& root, const LaunchPlan& plan) {
  for (const auto& m : plan.mounts) {
    if (m.type != "bind" || m.source_ino == 0) continue;
    auto st = root.stat_no_symlinks(m.destination);
    // An idmapped staging pinned the validated inode before create; its path must still name it, as
    // every walk, sweep and check after the session reads the path (user_namespace = "range").
    struct stat host{};
    bool path_kept = plan.isolation.idmapped_binds.empty() ||
                     (::lstat(m.source.c_str(), &host) == 0 && host.st_dev == m.source_dev && host.st_ino == m.source_ino);
    if (st && st->st_dev == m.source_dev && st->st_ino == m.source_ino && path_kept) continue;
    bool ws = m.source == plan.git.workspace.path;
    throw Error(ws ? ErrorKind::workspace_rejected : ErrorKind::git_unmountable,
                "'" + m.source + "' mounted at '" + m.destination +
                    "' is not the directory that was validated (it was replaced between the check and the mount); "
                    "nothing was started");
  }
}

void check_command(const ContainerRoot& root, const nlohmann::json& state, const LaunchPlan& plan) {
  auto [uid, gid] = agent_host_ids(plan);  // the seat kernel's ids (plan/userns.h)
  CommandVerdict v = root.resolve_command(plan.argv[0], container_path_env(state), plan.workdir, uid, gid);
  if (v == CommandVerdict::not_found)
    throw Error(ErrorKind::command_not_found, "command not found inside the container: '" + plan.argv[0] + "'");
  if (v == CommandVerdict::not_executable)
    throw Error(ErrorKind::command_not_executable, "command not executable inside the container: '" + plan.argv[0] + "'");
}

void check_limits_enforced(SessionResult& result, const LaunchPlan& plan) {
  for (const auto& w : result.warnings)
    if (w.find(kIgnoredLimits) != std::string::npos) result.limits_enforced = false;
  if (result.limits_enforced || plan.waive_unenforced_limits) return;
  throw Error(ErrorKind::limits_unenforced,
              "podman will not enforce the memory/pids/cpu limits on this seat (\"" + std::string(kIgnoredLimits) +
                  "\"); refusing to start. The seat owner may waive this with waive_unenforced_limits = true in " +
                  plan.waiver_source);
}

void check_sandbox_boot(const LaunchPlan& plan, const SentryBoot& boot) {
  std::string why = gvisor_boot_mismatch(plan, boot.platform, boot.network);
  if (!why.empty())
    throw Error(ErrorKind::isolation_unavailable, "gVisor (runsc): the podman service at " + plan.socket + " " + why +
                                                      "; its containers.conf must name " + plan.isolation.oci_runtime +
                                                      "; nothing was started");
}

}  // namespace asbx
