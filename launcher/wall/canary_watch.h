// The decoys in the session's HOME and the watch on them: written by the launcher between init
// and start through the pinned HOME fd, then watched from the seat side with inotify (opens of
// each decoy, listings of each decoy-only directory). Nothing inside the container takes part,
// and it works rootless (the watch needs only read access to files the launcher wrote).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "base/beneath.h"
#include "base/tripwire_plan.h"

namespace asbx {

class CanaryWatch {
 public:
  // Each decoy 0600 (parents 0700), owned by uid:gid when `chown` (a root launcher), filled with
  // canary_content(path, mark). Throws Error(tripwire) naming the path.
  // `on_read` (gVisor): a decoy trips when read, or when a second open of it is held at once (a
  // directory when listed). The gofer opens what the sentry only walks to (a `stat`, `ls -la ~`),
  // one open held while the sentry keeps the file; an open for reading is a second one beside it
  // (the sentry maps that one into the agent, and a mapping's reads reach no inotify).
  void arm(int home_fd, const TripwirePlan& plan, const std::string& mark, bool chown, unsigned uid, unsigned gid,
           bool on_read = false);
  int fd() const { return inotify_.get(); }  // -1 when nothing is watched
  // What is queued now: `seen` gets each decoy opened ("relative/path") or directory listed
  // ("relative/dir/"); "(events lost)" when the kernel's queue overflowed.
  void drain(const std::function<void(const std::string&)>& seen);
  // The watches gone (the inotify fd closed): the launcher's own reads of HOME afterwards (the
  // state collection, the secret scan) are no opens of anyone's. Idempotent.
  void disarm();

 private:
  void watch(int home_fd, const std::string& path, bool dir);
  bool same_burst(int wd);
  bool opened_for_reading(int wd, std::uint32_t mask);
  static constexpr std::int64_t kBurstMs = 100;
  std::map<int, std::int64_t> last_read_ms_;  // on_read: the last read of each decoy
  std::map<int, int> held_;                    // on_read: opens of each decoy not yet closed
  UniqueFd inotify_;
  std::uint32_t event_ = 0;  // IN_OPEN, or IN_ACCESS on_read
  std::map<int, std::pair<std::string, bool>> watches_;  // watch descriptor → path, is a directory
};

}  // namespace asbx
