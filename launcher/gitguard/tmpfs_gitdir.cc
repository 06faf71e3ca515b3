#include "launcher/gitguard/tmpfs_gitdir.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"
#include "gitscan/index.h"
#include "gitscan/refs.h"
#include "plan/userns.h"

namespace asbx {
namespace {

[[noreturn]] void unstaged(const LaunchPlan& plan, const std::string& why) {
  throw Error(ErrorKind::git_unmountable,
              "workspace '" + plan.git.workspace.path + "': the session's gitdir '" + plan.git.tmpfs + "' " + why);
}

// The file's bytes and who owned it; nullopt when it is not a regular file within the cap.
std::optional<std::string> read_owned(int dirfd, const std::string& name, struct stat& st) {
  UniqueFd fd(open_beneath(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kGitCopyMaxBytes) return std::nullopt;
  return read_file_beneath(dirfd, name, kGitCopyMaxBytes);
}

std::string validate(const std::string& name, const std::string& data, std::size_t hash_len) {
  if (name == "HEAD") return check_head(data, hash_len);
  std::string why;
  if (name == "packed-refs") return parse_packed_refs(data, hash_len, why) ? "" : why;
  GitIndexSummary index = parse_git_index(data, hash_len);
  if (!index.error.empty()) return index.error;
  if (!index.bad_path.empty()) return "a path git refuses, " + index.bad_path;
  return index.split_index ? "a split index (its entries live in a sharedindex file that stays inside)" : "";
}

std::string random_suffix() {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return std::to_string(::getpid());
  char out[17];
  for (int i = 0; i < 8; ++i) std::snprintf(out + 2 * i, 3, "%02x", bytes[i]);
  return out;
}

// A new file beside `name` (O_EXCL, never through a link), renamed over it: whatever is at
// `name` is replaced, never written through.
std::string put_file(int dirfd, const std::string& name, const std::string& data, uid_t uid, gid_t gid, mode_t mode) {
  std::string tmp = "." + name + ".asbx-" + random_suffix();
  int fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return std::string("cannot create a new file beside it: ") + std::strerror(errno);
  bool ok = write_all(fd, data) && (::geteuid() != 0 || ::fchown(fd, uid, gid) == 0) && ::fchmod(fd, mode) == 0 &&
            ::fsync(fd) == 0;
  std::string why = ok ? "" : std::string("cannot write it: ") + std::strerror(errno);
  ::close(fd);
  if (ok && ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) why = std::string("cannot rename it: ") + std::strerror(errno);
  if (!why.empty()) ::unlinkat(dirfd, tmp.c_str(), 0);
  return why;
}

}  // namespace

GitdirFiles TmpfsGitdir::stage(const ContainerRoot& root, const LaunchPlan& plan, int host_gitdir) {
  fd_ = UniqueFd(open_under(root.fd(), plan.git.tmpfs, O_PATH | O_DIRECTORY, true, true));
  struct statfs fs{};
  if (!fd_) unstaged(plan, std::string("cannot be opened inside the container: ") + std::strerror(errno));
  if (::fstatfs(fd_.get(), &fs) != 0 || fs.f_type != TMPFS_MAGIC) unstaged(plan, "is not the tmpfs the plan mounts");
  struct stat dir{};
  if (::fstat(host_gitdir, &dir) == 0) dir_owner_ = {0, dir.st_uid, dir.st_gid, 0644};
  auto [uid, gid] = agent_host_ids(plan);  // the seat kernel's ids (plan/userns.h)
  GitdirFiles files;
  for (const auto& name : plan.git.copied) {
    struct stat st{};
    auto data = read_owned(host_gitdir, name, st);
    if (!data) unstaged(plan, "cannot get '" + name + "' from the host: not a regular file of at most 64 MiB any more");
    originals_[name] = {content_digest(*data), st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 0777)};
    std::string why = write_new_file(fd_.get(), name, *data, 0644, !plan.rootless, uid, gid);
    if (!why.empty()) unstaged(plan, "cannot receive '" + name + "': " + why);
    files[name] = std::move(*data);
  }
  return files;
}

GitdirFiles TmpfsGitdir::left(const LaunchPlan& plan) const {
  GitdirFiles files;
  if (!fd_) return files;
  for (const auto& name : plan.git.copyable)
    if (auto data = read_file_beneath(fd_.get(), name, kGitCopyMaxBytes)) files[name] = std::move(*data);
  return files;
}

void TmpfsGitdir::copy_back(const LaunchPlan& plan, int host_gitdir, const GitdirFiles& left, GitReport& report,
                            std::int64_t room) const {
  for (const auto& name : plan.git.copyable) {
    auto it = left.find(name);
    auto had = originals_.find(name);
    auto keep = [&](const std::string& why) { report.not_copied_back.push_back(name + ": " + why + "; the host's is kept"); };
    if (it == left.end()) {
      if (had != originals_.end()) keep("missing, not a regular file, or over 64 MiB at the end");
      continue;
    }
    if (had != originals_.end() && content_digest(it->second) == had->second.digest) continue;  // unchanged
    if (std::string why = validate(name, it->second, plan.git.hash_len); !why.empty()) {
      keep(why);
      continue;
    }
    struct stat st{};
    auto now = read_owned(host_gitdir, name, st);
    bool host_changed = had == originals_.end() ? now.has_value() : !now || content_digest(*now) != had->second.digest;
    if (host_changed) {
      keep("the host's copy changed during the session");
      continue;
    }
    // What the new file adds over the one it replaces (a whole block each), against what is left.
    std::int64_t grows = ((static_cast<std::int64_t>(it->second.size()) + 4095) / 4096) * 4096 - (now ? st.st_blocks * 512 : 0);
    if (grows > room) {
      keep("it would grow the host's gitdir by " + std::to_string(grows) + " bytes, past what is left of the session's disk budget (" +
           std::to_string(std::max<std::int64_t>(room, 0)) + " bytes)");
      continue;
    }
    room -= std::max<std::int64_t>(grows, 0);
    const Original& o = had == originals_.end() ? dir_owner_ : had->second;
    if (std::string why = put_file(host_gitdir, name, it->second, o.uid, o.gid, o.mode); !why.empty()) keep(why);
    else report.copied_back.push_back(name);
  }
}

}  // namespace asbx
