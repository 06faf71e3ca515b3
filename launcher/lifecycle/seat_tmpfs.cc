#include "launcher/lifecycle/seat_tmpfs.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <fcntl.h>
#include <cstring>
#include <filesystem>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/session_dir.h"
#include "launcher/podman/gc.h"

namespace asbx {
namespace {

const std::string kTmpfsDir = "/tmpfs";
const std::string kOwnerFile = "/owner";
constexpr int kLeaveWaitMs = 2000;  // a gc holds it for a removal at most
constexpr int kSweepWaitMs = 200;   // a launcher holds it while it writes its owner

unsigned long flags_of(const Mount& m) {
  unsigned long f = MS_NOSUID | MS_NODEV;
  for (const auto& o : m.options)
    if (o == "noexec") f |= MS_NOEXEC;
  return f;
}

// The tmpfs's own data options (size, mode, uid, gid).
std::string data_of(const Mount& m) {
  std::vector<std::string> data;
  for (const auto& o : m.options)
    if (o != "nosuid" && o != "nodev" && o != "noexec") data.push_back(o);
  return join(data, ",");
}

// Which wall asked for the seat tmpfs: gVisor, or a user namespace (plan/isolation.h move_tmpfs_to_seat).
std::string wall_of(const LaunchPlan& plan) {
  return plan.isolation.wall == "gvisor" ? "gVisor (runsc)" : "user namespace (user_namespace = \"range\")";
}

[[noreturn]] void refuse(const LaunchPlan& plan, const Mount& m, const std::string& step) {
  std::string err = errno ? std::string(": ") + std::strerror(errno) : "";
  throw Error(ErrorKind::isolation_unavailable, wall_of(plan) + ": the seat tmpfs for '" + m.destination + "' (" + m.source +
                                                    "): " + step + err + "; nothing was started");
}

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

// A session dir's owner: the seat tmpfs's file when the seat tmpfs made the dir, else the dir's own.
bool read_dir_owner(const std::string& dir, long& pid, std::int64_t& started, std::string& boot) {
  return read_owner(dir + kTmpfsDir + kOwnerFile, pid, started, boot) || read_owner(dir + kOwnerFile, pid, started, boot);
}

// True when `path` is the root of a mount (an idmapped staging or a tmpfs not yet unmounted): what
// a recursive removal must never cross (a staging is the owner's workspace).
bool is_mount_root(const std::string& path) {
  struct statx sx{};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) != 0) return errno != ENOENT;
  return !(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

// The entries of a session's tmpfs dir (mount points, the owner file), then the dir: one level only.
void remove_flat(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (::rmdir(e.path().c_str()) != 0) ::unlink(e.path().c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

bool write_session_owner(const std::string& path, const LaunchPlan& plan) {
  auto label = [&](const char* key) {
    auto it = plan.labels.find(key);
    return it == plan.labels.end() ? std::string() : it->second;
  };
  std::string text = label("agent-sandbox.launcher-pid") + " " + label("agent-sandbox.started") + " " +
                     label("agent-sandbox.boot-id") + "\n";
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

void SeatTmpfs::mount(const LaunchPlan& plan) {
  if (plan.isolation.seat_tmpfs.empty()) return;
  std::string parent = plan.session_dir.substr(0, plan.session_dir.rfind('/')), why;
  if (!make_dirs(parent, &why)) {
    errno = 0;
    refuse(plan, plan.isolation.seat_tmpfs.front(), why);
  }
  SessionDirLock lock;  // held until the owner is written: gc reads it under the lock (session_dir.h)
  if (!lock.take(plan.session_dir)) refuse(plan, plan.isolation.seat_tmpfs.front(), "cannot take " + plan.session_dir);
  dir_ = plan.session_dir;
  if (!lock.made()) refuse_if_held(plan);
  std::string base = plan.session_dir + kTmpfsDir;
  if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST) refuse(plan, plan.isolation.seat_tmpfs.front(), "mkdir " + base);
  drop_gone_owner(base + kOwnerFile, plan);
  if (!write_session_owner(base + kOwnerFile, plan)) refuse(plan, plan.isolation.seat_tmpfs.front(), "write " + base + kOwnerFile);
  owner_ = base + kOwnerFile;
  for (const auto& m : plan.isolation.seat_tmpfs) {
    if (::mkdir(m.source.c_str(), 0700) != 0) refuse(plan, m, "mkdir");
    if (::mount("tmpfs", m.source.c_str(), "tmpfs", flags_of(m), data_of(m).c_str()) != 0) {
      ::rmdir(m.source.c_str());
      refuse(plan, m, "mount");
    }
    mounted_.push_back(m.source);
  }
}

void SeatTmpfs::release() {
  for (const auto& path : mounted_) {
    ::umount2(path.c_str(), MNT_DETACH);
    ::rmdir(path.c_str());
  }
  mounted_.clear();
  if (!dir_.empty()) leave_session_dir(dir_, owner_);
  owner_.clear();
  dir_.clear();
}

void drop_gone_owner(const std::string& path, const LaunchPlan& plan) {
  long pid = 0;
  std::int64_t started = 0;
  std::string boot;
  auto own = plan.labels.find("agent-sandbox.launcher-pid");
  if (read_owner(path, pid, started, boot) && own != plan.labels.end() && own->second == std::to_string(pid)) return;
  ::unlink(path.c_str());  // refuse_if_held let the dir be taken: its owner is gone, or the file is not whole
}

void leave_session_dir(const std::string& dir, const std::string& owner) {
  auto leave = [&] {
    if (!owner.empty()) ::unlink(owner.c_str());
    struct stat st{};
    if (::lstat((dir + kTmpfsDir + kOwnerFile).c_str(), &st) == 0 || ::lstat((dir + kOwnerFile).c_str(), &st) == 0)
      return;  // another part of this launcher still holds it, or a launcher that took it since
    if (unmount_seat_tmpfs(dir)) remove_flat(dir + kTmpfsDir);  // never across a mount
    ::rmdir(dir.c_str());  // only when empty: persist's socket keeps it
  };
  with_session_dir_locked(dir, kLeaveWaitMs, leave);  // else OWNER names a launcher soon gone: gc's sweep takes the dir
}

bool unmount_seat_tmpfs(const std::string& session_dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(session_dir + kTmpfsDir, ec))
    ::umount2(e.path().c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  for (const auto& e : std::filesystem::directory_iterator(session_dir + kTmpfsDir, ec))
    if (is_mount_root(e.path().string())) return false;
  return true;
}

void refuse_if_held(const LaunchPlan& plan) {
  if (long holder = session_dir_holder(plan, current_host_facts().launcher_alive))
    throw Error(ErrorKind::create_failed, "--id " + plan.session_id + ": a session of that id is already running on this seat "
                                          "(its launcher is pid " + std::to_string(holder) + "); nothing was created");
}

long session_dir_holder(const LaunchPlan& plan, const std::function<bool(long, std::int64_t)>& alive) {
  long pid = 0;
  std::int64_t started = 0;
  std::string boot;
  if (!read_dir_owner(plan.session_dir, pid, started, boot))
    return 0;
  auto own = plan.labels.find("agent-sandbox.launcher-pid");
  if (own != plan.labels.end() && own->second == std::to_string(pid)) return 0;
  auto boot_id = plan.labels.find("agent-sandbox.boot-id");
  if (boot_id == plan.labels.end() || boot_id->second != boot || !alive(pid, started)) return 0;
  return pid;
}

bool dead_owner_under(const std::string& runtime_dir, const std::string& boot_id,
                      const std::function<bool(long, std::int64_t)>& alive) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(runtime_dir, ec)) {
    std::string boot;
    long pid = 0;
    std::int64_t started = 0;
    // A pool member's dir names its keeper, which its claim kills: members go by their claims.
    if (!e.is_directory(ec) || e.is_symlink(ec) || e.path().filename().string().rfind("pool-", 0) == 0) continue;
    if (read_dir_owner(e.path().string(), pid, started, boot) && boot == boot_id && !alive(pid, started))
      return true;
  }
  return false;
}

std::vector<StaleSeatTmpfs> collect_stale_seat_tmpfs(const std::string& runtime_dir, const std::set<std::string>& listed,
                                                     const std::string& boot_id,
                                                     const std::function<bool(long, std::int64_t)>& alive) {
  std::vector<StaleSeatTmpfs> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(runtime_dir, ec)) {
    std::string session = e.path().filename().string(), boot;
    long pid = 0;
    std::int64_t started = 0;
    if (listed.count(session) || !e.is_directory(ec) || e.is_symlink(ec)) continue;
    if (!read_dir_owner(e.path().string(), pid, started, boot)) continue;
    std::string why = boot != boot_id ? "the seat rebooted since its launch (boot id " + boot + ")"
                      : !alive(pid, started) ? "its launcher (pid " + std::to_string(pid) + ") is gone"
                                             : "";
    if (why.empty()) continue;
    bool removed = false;
    with_session_dir_locked(e.path().string(), kSweepWaitMs, [&] {  // its owner read again: a launcher may have taken it
      long now_pid = 0;
      std::int64_t now_started = 0;
      std::string now_boot;
      if (!read_dir_owner(e.path().string(), now_pid, now_started, now_boot) || now_pid != pid ||
          now_started != started || now_boot != boot || !unmount_seat_tmpfs(e.path().string()))
        return;  // a new owner, or a mount stays: never removed across it
      std::filesystem::remove_all(e.path(), ec);  // never follows links
      removed = true;
    });
    if (removed) out.push_back({session, started, why + " and no container carries its session"});
  }
  return out;
}

bool owner_holds(const std::string& dir, const std::string& boot_id,
                 const std::function<bool(long pid, std::int64_t started_unix)>& alive) {
  long pid = 0;
  std::int64_t started = 0;
  std::string boot;
  return read_dir_owner(dir, pid, started, boot) && boot == boot_id && alive(pid, started);
}

}  // namespace asbx
