#include "launcher/lifecycle/late_close.h"

#include <algorithm>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

namespace asbx {
namespace {

std::mutex late_mutex;
LateFds late;  // guarded by late_mutex

}  // namespace

void close_late(UniqueFd fd) {
  if (!fd) return;
  std::lock_guard<std::mutex> hold(late_mutex);
  if (late.n < kMaxLateFds) late.fd[late.n++] = fd.release();
}  // else UniqueFd closes it here

LateFds late_fds() {
  std::lock_guard<std::mutex> hold(late_mutex);
  LateFds copy = late;
  std::sort(copy.fd, copy.fd + copy.n);
  return copy;
}

void drop_late_fds() {
  std::lock_guard<std::mutex> hold(late_mutex);
  for (int i = 0; i < late.n; ++i) ::close(late.fd[i]);
  late.n = 0;
}

void close_from_4_but(const LateFds& keep) {
  unsigned from = 4;
  for (int i = 0; i <= keep.n; ++i) {
    bool last = i == keep.n;
    unsigned to = last ? ~0u : static_cast<unsigned>(keep.fd[i]);
    if (!last && to < from) continue;  // below 4, or a repeat
    if (to > from && ::syscall(SYS_close_range, from, last ? to : to - 1, 0u) != 0)
      for (unsigned fd = from; fd < to && fd < 65536; ++fd) ::close(static_cast<int>(fd));
    if (!last) from = to + 1;
  }
}

}  // namespace asbx
