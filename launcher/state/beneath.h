// openat2 beneath a directory fd with every link refused: what state collection uses to
// read the agent's tree and to write the copy. Nothing here follows a symlink, crosses a
// mount or leaves the directory the fd names.
#pragma once
#include <string>
#include <sys/types.h>

namespace asbx {

// -1 + errno on failure (ELOOP for a symlink anywhere on the way, EXDEV for a mount).
int open_beneath(int dirfd, const std::string& relative, int flags, mode_t mode = 0);

}  // namespace asbx
