#include "launcher/lifecycle/seat_tmpfs.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/session_dir.h"
#include "launcher/lifecycle/session_owner.h"
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

// mountinfo's escapes (\040 for a space, \011, \012, \134) undone.
std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool esc = s[i] == '\\' && i + 3 < s.size();
    if (esc && std::isdigit(static_cast<unsigned char>(s[i + 1])) && std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Whether a mount point is DIR or lies anywhere beneath it (this process's mount table; DIR's real path).
// A dir that cannot be resolved counts as having one: nothing is removed then.
bool mount_beneath(const std::string& dir) {
  char real[PATH_MAX];
  if (!::realpath(dir.c_str(), real)) return errno != ENOENT;
  std::string self = real, prefix = self + "/";
  std::ifstream info("/proc/self/mountinfo");
  if (!info) return true;
  for (std::string line; std::getline(info, line);) {
    std::istringstream fields(line);
    std::string skip, at;
    fields >> skip >> skip >> skip >> skip >> at;  // the 5th field: the mount point, octal-escaped
    std::string point = unescape_mountinfo(at);
    if (point == self || point.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Whether PATH is a directory itself, not a link to one: what a session dir's tmpfs/ must be before
// anything lists it (a link planted there would lead the unmounts and removals elsewhere).
bool real_dir(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The entries of a session's tmpfs dir (mount points, the owner file), then the dir: one level only.
void remove_flat(const std::string& dir) {
  if (!real_dir(dir)) return (void)::unlink(dir.c_str());
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (::rmdir(e.path().c_str()) != 0) ::unlink(e.path().c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

void SeatTmpfs::mount(const LaunchPlan& plan) {
  if (plan.isolation.seat_tmpfs.empty()) return;
  std::string parent = plan.session_dir.substr(0, plan.session_dir.rfind('/')), why;
  if (!make_dirs(parent, &why)) {
    errno = 0;
    refuse(plan, plan.isolation.seat_tmpfs.front(), why);
  }
  {
    SessionDirLock lock;  // held until the owner is written: gc reads it under the lock (session_dir.h)
    if (!take_session_dir(plan, lock)) refuse(plan, plan.isolation.seat_tmpfs.front(), "cannot take " + plan.session_dir);
    dir_ = plan.session_dir;
    std::string base = plan.session_dir + kTmpfsDir;
    if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST) refuse(plan, plan.isolation.seat_tmpfs.front(), "mkdir " + base);
    owner_ = base + kOwnerFile;  // first: release() removes one written in part
    if (!write_session_owner(owner_, plan)) refuse(plan, plan.isolation.seat_tmpfs.front(), "write " + owner_);
  }
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
  if (real_dir(session_dir + kTmpfsDir))  // else none, or a link: nothing of ours is mounted there
    for (const auto& e : std::filesystem::directory_iterator(session_dir + kTmpfsDir, ec))
      ::umount2(e.path().c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  return !mount_beneath(session_dir);  // ours, or one someone else put anywhere in it
}

namespace {

// Why DIR is a leftover: a whole owner file, and none naming a live launcher of this boot; "" else.
std::string why_stale(const std::string& dir, const std::string& boot_id,
                      const std::function<bool(long, std::int64_t)>& alive, std::int64_t& started) {
  DirOwners o = read_dir_owners(dir, boot_id, alive, {});
  if (!o.whole || o.live) return "";
  started = o.started;
  return o.boot != boot_id ? "the seat rebooted since its launch (boot id " + o.boot + ")"
                           : "its launcher (pid " + std::to_string(o.pid) + ") is gone";
}

}  // namespace

std::vector<StaleSeatTmpfs> collect_stale_seat_tmpfs(const std::string& runtime_dir, const std::set<std::string>& listed,
                                                     const std::string& boot_id,
                                                     const std::function<bool(long, std::int64_t)>& alive) {
  std::vector<StaleSeatTmpfs> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(runtime_dir, ec)) {
    std::string session = e.path().filename().string(), dir = e.path().string(), why;
    std::int64_t started = 0;
    if (listed.count(session) || !e.is_directory(ec) || e.is_symlink(ec) || why_stale(dir, boot_id, alive, started).empty())
      continue;
    with_session_dir_locked(dir, kSweepWaitMs, [&] {  // read again: a launcher may have taken it since
      why = why_stale(dir, boot_id, alive, started);
      if (why.empty() || !unmount_seat_tmpfs(dir)) return (void)(why = "");  // a mount stays: never removed across it
      std::filesystem::remove_all(dir, ec);  // never follows links
    });
    if (!why.empty()) out.push_back({session, started, why + " and no container carries its session"});
  }
  return out;
}

bool take_session_dir(const LaunchPlan& plan, SessionDirLock& lock) {
  if (!lock.take(plan.session_dir)) {
    if (errno != EWOULDBLOCK) return false;  // the wait's limit: someone holds the id's dir, as a live launcher would
    throw Error(ErrorKind::create_failed, "--id " + plan.session_id + ": the session dir " + plan.session_dir +
                                              " stayed locked for 10 s (another launcher of that id, or gc, stopped "
                                              "while it held it); nothing was created");
  }
  if (lock.made()) return true;
  refuse_if_held(plan);
  if (owned_by_plan(plan)) return true;  // another part of this launcher took it first
  // What launchers now gone left (owner files, a socket, a seat tmpfs): never across a mount that stays.
  if (!unmount_seat_tmpfs(plan.session_dir)) return errno = EBUSY, false;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(plan.session_dir, ec)) std::filesystem::remove_all(e.path(), ec);
  return true;
}

}  // namespace asbx
