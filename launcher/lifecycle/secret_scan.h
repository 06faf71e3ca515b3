// Inject mode's end-of-session check (docs/CREDENTIALS.md): the real token values must be
// nowhere the agent could have put them. Searched: the container's HOME (the pinned tmpfs), its
// writable layer (podman's upper dir, while the container still exists), its scratch tmpfs
// mounts (/tmp, /dev/shm: pinned before start, below), the workspace and git binds, and the
// environment the launcher gave it. Nothing followed, every open non-blocking, bounded; a
// finding names a path, never the value.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/beneath.h"
#include "launcher/podman/container_root.h"

namespace asbx {

struct ScanBudget {
  std::int64_t files = 200'000;
  std::int64_t bytes = std::int64_t(2) << 30;  // 2 GiB read at most
  bool exhausted = false;
};

// Paths ("LABEL/relative", printable(): the agent chose the names) of regular files under
// `dir_fd` holding any of `values`.
std::vector<std::string> scan_tree(int dir_fd, const std::string& label, const std::vector<std::string>& values,
                                   ScanBudget& budget);
// A tmpfs of the container is gone when it stops. Opened through its root between init and
// start (nothing of the agent has run), a directory fd keeps each one readable for the scan.
// (container path, pinned fd); throws Error(internal) when one cannot be opened.
using ScratchPins = std::vector<std::pair<std::string, UniqueFd>>;
inline constexpr const char* kScratchDirs[] = {"/tmp", "/dev/shm"};
ScratchPins pin_scratch(const ContainerRoot& root);

// True when any value occurs in `text` (pure; also used on the create body's env and argv).
bool holds_any(const std::string& text, const std::vector<std::string>& values);

}  // namespace asbx
