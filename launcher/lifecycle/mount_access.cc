#include "launcher/lifecycle/mount_access.h"

#include <cstdio>
#include <sys/stat.h>

#include "base/error.h"
#include "plan/userns.h"

namespace asbx {
namespace {

bool allows(const struct stat& st, unsigned uid, unsigned gid, mode_t user_bits, mode_t group_bits, mode_t other_bits) {
  if (uid == 0) return true;
  if (st.st_uid == uid) return (st.st_mode & user_bits) == user_bits;
  if (st.st_gid == gid) return (st.st_mode & group_bits) == group_bits;
  return (st.st_mode & other_bits) == other_bits;
}

// Ids as the owner knows them: a user namespace's kernel ids mapped back to the container's, and a
// bind's own root as it is on disk (its idmapped view shows other owners as the overflow id).
std::string describe(struct stat st, const LaunchPlan& plan, const Mount& m, bool last) {
  struct stat disk{};
  if (!plan.uid_map.empty() && last && ::lstat(m.source.c_str(), &disk) == 0) {
    st.st_uid = disk.st_uid;
    st.st_gid = disk.st_gid;
  } else if (!plan.uid_map.empty()) {
    std::int64_t uid = container_id_of(plan.uid_map, st.st_uid), gid = container_id_of(plan.gid_map, st.st_gid);
    if (uid >= 0) st.st_uid = static_cast<uid_t>(uid);
    if (gid >= 0) st.st_gid = static_cast<gid_t>(gid);
  }
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "owner " + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) + ", mode " + mode;
}

bool idmapped(const LaunchPlan& plan, const Mount& m) {
  for (const auto& b : plan.isolation.idmapped_binds)
    if (b.source == m.source) return true;
  return false;
}

bool is_workspace(const Mount& m) { return m.destination.rfind("/sandbox/workspaces/", 0) == 0; }

[[noreturn]] void refuse(const Mount& m, const std::string& user, const std::string& why) {
  if (is_workspace(m))
    throw Error(ErrorKind::workspace_rejected,
                "workspace '" + m.source + "' " + why + "; the agent runs as " + user + ": chown -R " + user + " '" +
                    m.source + "' (or make it writable for that user); nothing was started");
  throw Error(ErrorKind::git_unmountable,
              "git dir '" + m.source + "' " + why + "; the agent runs as " + user +
                  ": keep the mirror where that user can reach it (outside /root, e.g. git_roots = "
                  "[\"/srv/agent-sandbox/git-common\"]) and owned by it (chown -R " + user +
                  " on the mirror); nothing was started");
}

void check_one(const ContainerRoot& root, const Mount& m, unsigned uid, unsigned gid, const LaunchPlan& plan) {
  const std::string& user = plan.user;
  std::string prefix;
  for (std::size_t at = 1; at <= m.destination.size(); ++at) {
    if (at != m.destination.size() && m.destination[at] != '/') continue;
    prefix = m.destination.substr(0, at);
    auto st = root.stat_no_symlinks(prefix);
    if (!st) refuse(m, user, "cannot be looked at inside the container ('" + prefix + "')");
    bool last = at == m.destination.size();
    if (!last && !allows(*st, uid, gid, S_IXUSR, S_IXGRP, S_IXOTH))
      refuse(m, user, "cannot be reached inside the container: '" + prefix + "' is " + describe(*st, plan, m, false) + " there");
    if (!last) continue;
    // What git needs of it: read (and search a directory); write too when bound read-write.
    mode_t u = S_IRUSR | (m.read_only() ? 0 : S_IWUSR) | (S_ISDIR(st->st_mode) ? S_IXUSR : 0);
    if (!allows(*st, uid, gid, u, u >> 3, u >> 6))
      refuse(m, user, std::string("is not ") + (m.read_only() ? "readable" : "writable") + " by the container user (" +
                          describe(*st, plan, m, true) + ")");
    // An idmapped bind maps the agent's own uid and gid only, and the kernel refuses every write to an
    // inode whose owner or group it cannot map (EACCES, whatever the mode says).
    if (!m.read_only() && idmapped(plan, m) && (st->st_uid != uid || st->st_gid != gid))
      refuse(m, user, "is not writable by the container user in its user namespace (" + describe(*st, plan, m, true) +
                          "): there it writes only what its own uid and gid own");
  }
}

}  // namespace

void check_mounts_usable(const ContainerRoot& root, const LaunchPlan& plan) {
  auto [uid, gid] = agent_host_ids(plan);  // the seat kernel's ids (plan/userns.h)
  // gVisor's seat tmpfs binds are the launcher's own, made for the agent's user; what they stand for
  // (a tmpfs gitdir at its identical path) is reached through the same parents as the owner's binds
  // beside it, which are checked and named.
  auto seat_tmpfs = [&](const Mount& m) {
    for (const auto& t : plan.isolation.seat_tmpfs)
      if (t.source == m.source) return true;
    return false;
  };
  for (const auto& m : plan.mounts)
    if (m.type == "bind" && !seat_tmpfs(m)) check_one(root, m, uid, gid, plan);
}

}  // namespace asbx
