#include "launcher/state/beneath.h"

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace asbx {

int open_beneath(int dirfd, const std::string& relative, int flags, mode_t mode) {
  open_how how{};
  // RESOLVE_NO_SYMLINKS refuses a link anywhere, the last component too (ELOOP); O_NOFOLLOW
  // is left out for O_PATH, where it would hand back the link itself instead.
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOFOLLOW));
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  const char* path = relative.empty() ? "." : relative.c_str();
  for (;;) {
    long fd = ::syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) return static_cast<int>(fd);  // EAGAIN: a rename raced; retry
  }
}

}  // namespace asbx
