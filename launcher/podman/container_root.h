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

namespace asbx {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// openat2 under `dirfd`; `in_root` = RESOLVE_IN_ROOT (symlinks stay inside), else
// RESOLVE_BENEATH; `no_symlinks` refuses every symlink on the way. -1 + errno on failure.
int open_under(int dirfd, const std::string& path, int flags, bool in_root, bool no_symlinks, mode_t mode = 0);

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

// Writes `data` as a new file at `relative` under `dirfd` (parents made 0700),
// owned by uid:gid when `chown` (root launcher), never following a symlink.
// Returns "" or the reason it failed.
std::string write_new_file(int dirfd, const std::string& relative, const std::string& data, mode_t mode, bool chown,
                           unsigned uid, unsigned gid);
// A digest to tell whether a file changed (FNV-1a, 64 bits: not a security boundary,
// only "is this still the copy we wrote").
std::uint64_t content_digest(const std::string& data);
// The digest of a regular file at `relative` under `dirfd` (no symlinks, non-blocking
// open, at most `max_bytes` read); nullopt when missing, not regular, or too large.
std::optional<std::uint64_t> digest_file_under(int dirfd, const std::string& relative, std::int64_t max_bytes);

}  // namespace asbx
