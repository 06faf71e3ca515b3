#include "launcher/wall/canary_watch.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/late_close.h"
#include "tripwire/canaries.h"

namespace asbx {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::tripwire, "tripwire: cannot set the decoy ~/" + path + ": " + why);
}

}  // namespace

void CanaryWatch::arm(int home_fd, const TripwirePlan& plan, const std::string& mark, bool chown, unsigned uid,
                      unsigned gid, bool on_read) {
  if (plan.canaries.empty()) return;
  event_ = on_read ? IN_ACCESS : IN_OPEN;
  inotify_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_) throw Error(ErrorKind::tripwire, std::string("tripwire: inotify_init1: ") + std::strerror(errno));
  for (const auto& path : plan.canaries) {
    std::string content = canary_content(path, mark);
    std::string why = write_new_file(home_fd, path, content, 0600, chown, uid, gid);
    if (!why.empty()) fail(path, why);
    watch(home_fd, path, false);
  }
  for (const auto& dir : plan.listed_dirs) watch(home_fd, dir, true);
}

// Through an O_PATH fd opened beneath HOME without links: the watch is on what the launcher
// just wrote, wherever the path would lead later.
void CanaryWatch::watch(int home_fd, const std::string& path, bool dir) {
  UniqueFd at(open_under(home_fd, path, O_PATH | O_NOFOLLOW | (dir ? O_DIRECTORY : 0), false, true));
  if (!at) fail(path, std::string("cannot open it: ") + std::strerror(errno));
  std::string proc = "/proc/self/fd/" + std::to_string(at.get());
  std::uint32_t mask = dir ? (event_ | IN_ONLYDIR) : event_ == IN_ACCESS ? (IN_ACCESS | IN_OPEN | IN_CLOSE) : event_;
  int wd = ::inotify_add_watch(inotify_.get(), proc.c_str(), mask);
  if (wd < 0) fail(path, std::string("inotify_add_watch: ") + std::strerror(errno));
  watches_[wd] = {path, dir};
}

void CanaryWatch::drain(const std::function<void(const std::string&)>& seen) {
  if (!inotify_) return;
  alignas(inotify_event) char buf[8192];
  for (ssize_t n; (n = ::read(inotify_.get(), buf, sizeof buf)) > 0;) {
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      if (e->mask & IN_Q_OVERFLOW) seen("(events lost)");
      auto it = watches_.find(e->wd);
      if (it == watches_.end()) continue;
      const auto& [path, dir] = it->second;
      if (!(e->mask & event_) && (dir || !opened_for_reading(e->wd, e->mask))) continue;
      bool itself = !dir || ((e->mask & IN_ISDIR) && e->len == 0);  // a directory's, not a file's in it
      if (itself && !same_burst(e->wd)) seen(dir ? path + "/" : path);
    }
  }
}

// A read is many events where an open is one: a listing is a getdents that returns entries and one
// that returns none, a large file several reads. Reads of one decoy less than kBurstMs apart are one.
bool CanaryWatch::same_burst(int wd) {
  if (event_ != IN_ACCESS) return false;
  std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now().time_since_epoch()).count();
  auto [it, first] = last_read_ms_.try_emplace(wd, now);
  bool same = !first && now - it->second < kBurstMs;
  it->second = now;
  return same;
}

// on_read, a decoy file's opens and closes: true when an open makes two held at once.
bool CanaryWatch::opened_for_reading(int wd, std::uint32_t mask) {
  if (event_ != IN_ACCESS) return false;
  int& held = held_[wd];
  if (mask & IN_OPEN) return ++held >= 2;
  if ((mask & IN_CLOSE) && held > 0) --held;  // a close of an open made before the watch: none counted
  return false;
}

void CanaryWatch::disarm() {
  if (inotify_)  // no event more; the instance's last close waits for the kernel (late_close.h)
    for (const auto& [wd, what] : watches_) ::inotify_rm_watch(inotify_.get(), wd);
  close_late(std::move(inotify_));
  watches_.clear();
  held_.clear();
}

}  // namespace asbx
