// Paths of /proc and /sys masked in every session, beyond podman's own list (/proc/keys,
// /proc/timer_list, /proc/kcore, ...): host-wide facts the kernel shows to any uid
// (docs/THREATS.md, "The kernel"). The create body's `mask`; a path the seat's kernel lacks is
// skipped by the runtime.
#pragma once
#include <string>
#include <vector>

namespace asbx {

struct MaskedPath {
  std::string path;
  std::string reason;
};
const std::vector<MaskedPath>& kernel_paths_masked();

}  // namespace asbx
