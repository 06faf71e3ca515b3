#include "launcher/lifecycle/session_owner.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/request.h"
#include "base/error.h"
#include "launcher/podman/gc.h"

namespace asbx {
namespace {

const std::string kTmpfsDir = "/tmpfs";
const std::string kOwnerFile = "/owner";

// The owner a session dir's seat tmpfs names; false when there is none or it is not whole.
bool read_owner(const std::string& path, long& pid, std::int64_t& started, std::string& boot) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  char buf[256];
  ssize_t n = fd ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
  if (n <= 0 || buf[n - 1] != '\n') return false;
  buf[n] = 0;
  char id[128];
  return std::sscanf(buf, "%ld %" SCNd64 " %127s", &pid, &started, id) == 3 && pid > 0 && (boot = id, true);
}

std::string label_of(const LaunchPlan& plan, const char* key) {
  auto it = plan.labels.find(key);
  return it == plan.labels.end() ? std::string() : it->second;
}

// The plan's own launcher, as its owner files name it: its pid and its start (a pid alone may be
// a gone launcher's, reused).
Mine mine_of(const LaunchPlan& plan) {
  return {std::atol(label_of(plan, "agent-sandbox.launcher-pid").c_str()),
          std::atoll(label_of(plan, "agent-sandbox.started").c_str())};
}

}  // namespace

bool write_session_owner(const std::string& path, const LaunchPlan& plan) {
  std::string text = label_of(plan, "agent-sandbox.launcher-pid") + " " + label_of(plan, "agent-sandbox.started") + " " +
                     label_of(plan, "agent-sandbox.boot-id") + "\n";
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  return fd && ::write(fd.get(), text.data(), text.size()) == ssize_t(text.size());
}

bool replace_session_owner(const std::string& session_dir, const LaunchPlan& plan) {
  std::string next = session_dir + kOwnerFile + ".new";
  ::unlink(next.c_str());
  if (write_session_owner(next, plan) && ::rename(next.c_str(), (session_dir + kOwnerFile).c_str()) == 0) return true;
  int err = errno;
  ::unlink(next.c_str());
  errno = err;
  return false;
}

DirOwners read_dir_owners(const std::string& dir, const std::string& boot_id, const std::function<bool(long, std::int64_t)>& alive,
                          Mine mine) {
  DirOwners o;
  struct stat st{};
  bool tmpfs_dir = ::lstat((dir + kTmpfsDir).c_str(), &st) == 0 && S_ISDIR(st.st_mode);  // never through a link
  for (const std::string& file : {tmpfs_dir ? dir + kTmpfsDir + kOwnerFile : std::string(), dir + kOwnerFile}) {
    long pid = 0;
    std::int64_t started = 0;
    std::string boot;
    if (!read_owner(file, pid, started, boot)) continue;
    if (!o.whole) o.pid = pid, o.started = started, o.boot = boot;
    o.whole = true;
    if (pid == mine.pid && started == mine.started) o.mine = true;
    else if (boot == boot_id && alive(pid, started)) o.live = o.live ? o.live : pid;
    else if (boot == boot_id) o.gone_this_boot = true;
  }
  return o;
}

void refuse_if_held(const LaunchPlan& plan) {
  if (long holder = session_dir_holder(plan, current_host_facts().launcher_alive))
    throw Error(ErrorKind::create_failed, "--id " + plan.session_id + ": a session of that id is already running on this seat "
                                          "(its launcher is pid " + std::to_string(holder) + "); nothing was created");
}

long session_dir_holder(const LaunchPlan& plan, const std::function<bool(long, std::int64_t)>& alive) {
  std::string boot = label_of(plan, "agent-sandbox.boot-id");
  return boot.empty() ? 0 : read_dir_owners(plan.session_dir, boot, alive, mine_of(plan)).live;
}

bool owned_by_plan(const LaunchPlan& plan) {
  Mine mine = mine_of(plan);
  return mine.pid > 0 && read_dir_owners(plan.session_dir, "", [](long, std::int64_t) { return false; }, mine).mine;
}

bool dead_owner_under(const std::string& runtime_dir, const std::string& boot_id,
                      const std::function<bool(long, std::int64_t)>& alive) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(runtime_dir, ec)) {
    // A pool member's dir names its keeper, which its claim kills: members go by their claims.
    if (!e.is_directory(ec) || e.is_symlink(ec) || e.path().filename().string().rfind(kMemberIdPrefix, 0) == 0) continue;
    DirOwners o = read_dir_owners(e.path().string(), boot_id, alive, {});
    if (o.gone_this_boot && !o.live) return true;
  }
  return false;
}

bool owner_holds(const std::string& dir, const std::string& boot_id,
                 const std::function<bool(long pid, std::int64_t started_unix)>& alive) {
  return read_dir_owners(dir, boot_id, alive, {}).live != 0;
}

}  // namespace asbx
