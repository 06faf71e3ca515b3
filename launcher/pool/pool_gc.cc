#include "launcher/pool/pool_gc.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "launcher/lifecycle/runtime_dir.h"
#include "launcher/podman/pool_claim.h"
#include "launcher/podman/service_loss.h"
#include "launcher/pool/ready.h"

namespace asbx {
namespace {

const std::int64_t kStaleClaimSeconds = 60;  // a claim linked just after gc listed: its member exists
const char kSuffix[] = ".claim";
constexpr int kKeeperEndMs = 1000;

}  // namespace

void apply_pool_claim(LiveSession& s) {
  if (!s.pool || s.pool_runtime_dir.empty() || s.pool_runtime_dir[0] != '/') return apply_pool_claim_at(s, -1);
  UniqueFd dir(::open((s.pool_runtime_dir + "/.pool").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  apply_pool_claim_at(s, dir.get());
}

bool apply_foreign_pool_claim(LiveSession& s, const std::string& runtime_dir) {
  std::string why;
  UniqueFd at = s.pool ? open_trusted_dir(runtime_dir, why) : UniqueFd();
  UniqueFd pool(at ? ::openat(at.get(), ".pool", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) : -1);
  apply_pool_claim_at(s, pool.get());
  return !s.pool || at || why.empty();  // not there: no claim can be
}

void end_keeper(const LiveSession& s, const std::function<bool(long, std::int64_t)>& alive) {
  if (s.launcher_pid <= 0 || !alive(s.launcher_pid, s.started_unix)) return;
  ContainerInit keeper;  // a pidfd holder: what it signals is the process it opened
  keeper.hold(s.launcher_pid);
  if (!alive(s.launcher_pid, s.started_unix) || !keeper.kill()) return;  // the pidfd is of the keeper checked
  keeper.outlives(kKeeperEndMs);  // waits until it has ended: its owner file then holds no more
}

void apply_pool_claim_at(LiveSession& s, int pool_dir) {
  if (!s.pool) return;
  s.pool_session = s.session;
  std::optional<PoolClaim> claim = pool_dir >= 0 ? read_claim(pool_dir, s.container_id) : std::nullopt;
  if (!claim) return;
  s.pool_claimed = true;
  s.launcher_pid = claim->pid;
  s.started_unix = claim->started_unix;
  s.timeout_ms = claim->timeout_ms;
  s.pool_session_ran = !claim->session.empty();  // gc's or a fill's own claim before a removal ran nothing
  if (!claim->session.empty()) s.session = claim->session;
}

bool claim_for_removal(const LiveSession& s) {
  if (s.pool_runtime_dir.empty() || s.pool_runtime_dir[0] != '/') return true;  // an old member: its labels alone
  int dir = ::open((s.pool_runtime_dir + "/.pool").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dir < 0) return true;  // no pool dir: no claim can be there
  bool mine = false;
  try {
    mine = claim_member(dir, s.container_id, PoolClaim{static_cast<long>(::getpid()), s.started_unix, 0, ""});
  } catch (const std::exception&) {
  }
  ::close(dir);
  return mine;
}

bool dead_claim_under(const std::string& runtime_dir, const std::function<bool(long, std::int64_t)>& alive) {
  UniqueFd pool(::open((runtime_dir + "/.pool").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!pool) return false;
  for (const Member& m : ready_members(runtime_dir)) {
    if (!m.claimed || m.init_pid <= 0 || !alive(m.init_pid, m.init_started)) continue;
    std::optional<PoolClaim> claim = read_claim(pool.get(), m.id);
    if (claim && !claim->session.empty() && !alive(claim->pid, claim->started_unix)) return true;
  }
  return false;
}

void drop_pool_claim(const std::string& runtime_dir, const std::string& container_id) {
  if (!runtime_dir.empty() && container_id.find('/') == std::string::npos)
    ::unlink((runtime_dir + "/.pool/" + container_id + kSuffix).c_str());
}

std::vector<std::string> collect_stale_claims(const std::string& runtime_dir, const std::set<std::string>& listed,
                                              std::int64_t now_unix) {
  std::vector<std::string> out;
  DIR* d = ::opendir((runtime_dir + "/.pool").c_str());
  if (!d) return out;
  const std::size_t n = sizeof kSuffix - 1;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= n || name.compare(name.size() - n, n, kSuffix) != 0) continue;
    std::string id = name.substr(0, name.size() - n);
    struct stat st{};
    if (listed.count(id) || ::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (now_unix - st.st_mtime < kStaleClaimSeconds) continue;
    if (::unlinkat(::dirfd(d), name.c_str(), 0) == 0) out.push_back("removed the claim of member " + id.substr(0, 12) + " (its container is gone)");
  }
  ::closedir(d);
  return out;
}

}  // namespace asbx
