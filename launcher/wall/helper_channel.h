// The channel between the launcher and a helper it forks into a container's namespaces (the
// door, the tripwire device): the helper sends back one fd, or the step it failed at and errno.
// The helper's side uses only async-signal-safe calls: the launcher may have threads when it forks.
#pragma once
#include <functional>
#include <string>

#include "base/error.h"

namespace asbx {

// What a helper reports when it fails: the step (its caller's numbering) and errno.
struct HelperFailure {
  int step;
  int err;
};

// In the helper: report the failure and _exit(1).
[[noreturn]] void helper_fails(int channel, int step, int err);
// In the helper: pass `fd` back; false (errno set) when it could not be sent.
bool helper_send_fd(int channel, int fd);
// True when the namespaces at paths a and b are one (same device and inode).
bool same_namespace(const std::string& a, const std::string& b);

struct HelperAnswer {
  int fd = -1;             // the fd passed back (close-on-exec), or -1
  bool timed_out = false;  // nothing within the wait
  bool failed = false;     // `failure` holds the helper's report
  HelperFailure failure{-1, 0};
};
// In the launcher: wait at most timeout_ms for the helper's answer.
HelperAnswer helper_answer(int channel, int timeout_ms);

// Forks a helper into the namespaces of the container's process `pid`. In the child,
// `child(userns, netns, channel)` must not return (userns is -1 when the container shares the
// launcher's user namespace). In the launcher, `receive(channel)` turns the answer into the fd
// or throws. The child is reaped in every case; what fails before it runs throws
// Error(kind, prefix + why).
int run_helper(long pid, ErrorKind kind, const std::string& prefix, const std::function<void(int, int, int)>& child,
               const std::function<int(int)>& receive);

}  // namespace asbx
