#include "launcher/lifecycle/disk_hidden.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <set>
#include <sstream>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

#include "launcher/podman/cgroup_monitor.h"

namespace asbx {
namespace {

bool gone(int err) { return err == ENOENT || err == ESRCH; }

// The names in a /proc directory; false (errno kept) when it cannot be read.
bool list(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') out.emplace_back(e->d_name);
  ::closedir(d);
  return true;
}

// Does thread `tid` share `what` (KCMP_FILES, KCMP_VM) with its process `pid`? Unknown: no.
bool shares(const std::string& pid, const std::string& tid, int what) {
  if (pid == tid) return false;
  long a = std::strtol(pid.c_str(), nullptr, 10), b = std::strtol(tid.c_str(), nullptr, 10);
  return ::syscall(SYS_kcmp, a, b, what, 0, 0) == 0;
}

struct Scan {
  const std::vector<dev_t>& devs;
  const std::function<bool()>& interrupt;
  std::set<std::pair<dev_t, ino_t>> seen;
  HiddenUsage u;
  std::int64_t looked = 0;

  bool done() const { return u.interrupted || !u.error.empty(); }

  void fail(const std::string& what) {
    if (u.error.empty()) u.error = "cannot read " + what + ": " + std::strerror(errno);
  }

  // `dir` holds links to open files (fd/) or mapped ones (map_files/); stat follows each.
  void links(const std::string& dir, bool required) {
    std::vector<std::string> names;
    if (!list(dir, names)) {
      if (required && !gone(errno)) fail(dir);
      return;
    }
    for (const auto& n : names) {
      if (++looked > kMaxHiddenLinks) {
        if (u.error.empty()) u.error = "more than " + std::to_string(kMaxHiddenLinks) + " open files and mappings to look at";
        return;
      }
      if (interrupt && looked % 1024 == 0 && (u.interrupted = interrupt())) return;
      held(dir + "/" + n);
    }
  }

  // One link to what a task holds (an open file, a mapping, its cwd, root or executable): counted
  // when it has no name left on a watched filesystem. A directory removed while a task stands in it
  // keeps every block its names once took (a directory never shrinks on ext4).
  void held(const std::string& link) {
    struct stat st{};
    if (::stat(link.c_str(), &st) != 0) return;  // closed or ended meanwhile, or not a file
    if (st.st_nlink != 0 || std::find(devs.begin(), devs.end(), st.st_dev) == devs.end()) return;
    if (!seen.insert({st.st_dev, st.st_ino}).second) return;
    u.bytes += static_cast<std::int64_t>(st.st_blocks) * 512, ++u.inodes;
  }
};

}  // namespace

HiddenUsage hidden_usage(const std::string& procs, const std::vector<dev_t>& devs, const std::string& proc,
                         const std::function<bool()>& interrupt) {
  Scan s{devs, interrupt, {}, {}};
  if (procs.empty() || devs.empty()) return s.u;
  auto text = read_small_file(procs);
  if (!text) {  // the cgroup is gone: nothing of the session runs
    if (!gone(errno)) s.fail(procs);
    return s.u;
  }
  std::istringstream in(*text);
  std::string pid;
  while (!s.done() && in >> pid) {
    std::vector<std::string> tids;
    std::string task = proc + "/" + pid + "/task";
    if (!list(task, tids)) {
      if (!gone(errno)) s.fail(task);
      continue;
    }
    s.held(proc + "/" + pid + "/exe");
    for (const auto& tid : tids) {
      if (s.done()) break;
      s.held(task + "/" + tid + "/cwd");
      s.held(task + "/" + tid + "/root");
      if (!shares(pid, tid, KCMP_FILES)) s.links(task + "/" + tid + "/fd", true);
      if (!shares(pid, tid, KCMP_VM)) s.links(task + "/" + tid + "/map_files", false);  // CAP_SYS_ADMIN on older kernels
    }
  }
  return s.u;
}

}  // namespace asbx
