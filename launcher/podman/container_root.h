// The initialised container's own root filesystem, seen from the seat through
// /proc/PID/root. Every path is resolved by the kernel *inside* that root (openat2
// RESOLVE_IN_ROOT, or RESOLVE_BENEATH under a directory fd), so an absolute symlink
// the agent planted resolves inside the container, never on the seat.
//
// Used between `init` and `start`, while nothing of the agent has run: to verify that
// each bind mount is the very directory that was validated, to decide whether the
// command exists, and to copy credentials into the tmpfs HOME. The HOME fd stays open
// after the container ends (it pins the tmpfs), so what the agent left there can be
// read afterwards without any channel the agent could steer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <sys/stat.h>

#include "base/beneath.h"

namespace asbx {

enum class CommandVerdict { found, not_found, not_executable };

class ContainerRoot {
 public:
  // Throws Error(internal) naming the pid when /proc/PID/root cannot be opened.
  explicit ContainerRoot(long pid);
  int fd() const { return root_.get(); }
  // stat of `path` inside, every symlink refused (nullopt + errno when it fails).
  std::optional<struct stat> stat_no_symlinks(const std::string& path) const;
  // How execve would find argv0 inside: PATH search without '/', else relative to
  // `workdir`; the file must be a regular file executable by uid:gid. A script's
  // "#!" interpreter must exist too.
  CommandVerdict resolve_command(const std::string& argv0, const std::string& path_env, const std::string& workdir,
                                 unsigned uid, unsigned gid) const;

 private:
  CommandVerdict check_file(const std::string& path, unsigned uid, unsigned gid, int depth) const;
  UniqueFd root_;
};


}  // namespace asbx
