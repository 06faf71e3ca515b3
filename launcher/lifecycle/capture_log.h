// --capture-log LOG on the caller's machine, shared by the local and the dispatched session:
// LOG is a new 0600 file renamed over the path in its directory, which is reached without
// following a symlink the agent could have made (a planted symlink or hardlink at the path loses
// its name, never written through; one above it is refused), and once it exists stdout carries exactly its path and a newline.
// The agent's output is streamed into the fd as it arrives; nothing here buffers it.
#pragma once
#include <string>

#include "base/beneath.h"

namespace asbx {

// LOG created and announced on stdout; throws Error(usage, "--capture-log: …") before
// printing anything when it cannot be created (its directory missing, not writable, …).
UniqueFd open_capture_log(const std::string& path);

}  // namespace asbx
