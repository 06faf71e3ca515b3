// openat2 beneath a directory fd, and the few file operations built on it that every room
// uses where the agent may have planted something: nothing here follows a symlink it was not
// told to, or leaves the directory the fd names.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace asbx {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  int get() const { return fd_; }
  int release() {  // the fd, no longer closed here
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// openat2 under `dirfd`; `in_root` = RESOLVE_IN_ROOT (symlinks stay inside), else
// RESOLVE_BENEATH; `no_symlinks` refuses every symlink on the way. -1 + errno on failure.
int open_under(int dirfd, const std::string& path, int flags, bool in_root, bool no_symlinks, mode_t mode = 0);

// openat2 beneath `dirfd` with every link refused and no mount crossed (what state
// collection uses to read the agent's tree and to write the copy).
// -1 + errno on failure (ELOOP for a symlink anywhere on the way, EXDEV for a mount).
int open_beneath(int dirfd, const std::string& relative, int flags, mode_t mode = 0);

// Writes `data` as a new file at `relative` under `dirfd` (parents made 0700),
// owned by uid:gid when `chown` (root launcher), never following a symlink.
// Returns "" or the reason it failed.
std::string write_new_file(int dirfd, const std::string& relative, const std::string& data, mode_t mode, bool chown,
                           unsigned uid, unsigned gid);
// The bytes of a regular file at `relative` under `dirfd` (no symlinks, non-blocking open, no
// mount crossed); nullopt when missing, not regular, or larger than `max_bytes`.
std::optional<std::string> read_file_beneath(int dirfd, const std::string& relative, std::int64_t max_bytes);
// A digest to tell whether a file changed (FNV-1a, 64 bits: not a security boundary,
// only "is this still the copy we wrote").
std::uint64_t content_digest(const std::string& data);
// The digest of a regular file at `relative` under `dirfd` (no symlinks, non-blocking
// open, at most `max_bytes` read); nullopt when missing, not regular, or too large.
std::optional<std::uint64_t> digest_file_under(int dirfd, const std::string& relative, std::int64_t max_bytes);

}  // namespace asbx
