#include "launcher/lifecycle/seat_tmpfs.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"

namespace asbx {
namespace {

const std::string kTmpfsDir = "/tmpfs";

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

[[noreturn]] void refuse(const Mount& m, const std::string& step) {
  std::string err = errno ? std::string(": ") + std::strerror(errno) : "";
  throw Error(ErrorKind::isolation_unavailable, "gVisor (runsc): the seat tmpfs for '" + m.destination + "' (" + m.source +
                                                    "): " + step + err + "; nothing was started");
}

}  // namespace

void SeatTmpfs::mount(const LaunchPlan& plan) {
  if (plan.isolation.seat_tmpfs.empty()) return;
  std::string parent = plan.session_dir.substr(0, plan.session_dir.rfind('/')), why;
  if (!make_dirs(parent, &why)) {
    errno = 0;
    refuse(plan.isolation.seat_tmpfs.front(), why);
  }
  if (::mkdir(plan.session_dir.c_str(), 0700) == 0) made_dir_ = plan.session_dir;
  else if (errno != EEXIST) refuse(plan.isolation.seat_tmpfs.front(), "cannot create " + plan.session_dir);
  std::string base = plan.session_dir + kTmpfsDir;
  if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST) refuse(plan.isolation.seat_tmpfs.front(), "mkdir " + base);
  for (const auto& m : plan.isolation.seat_tmpfs) {
    if (::mkdir(m.source.c_str(), 0700) != 0) refuse(m, "mkdir");
    if (::mount("tmpfs", m.source.c_str(), "tmpfs", flags_of(m), data_of(m).c_str()) != 0) {
      ::rmdir(m.source.c_str());
      refuse(m, "mount");
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
  if (made_dir_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(made_dir_ + kTmpfsDir, ignored);
  ::rmdir(made_dir_.c_str());
  made_dir_.clear();
}

void unmount_seat_tmpfs(const std::string& session_dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(session_dir + kTmpfsDir, ec))
    ::umount2(e.path().c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
}

}  // namespace asbx
