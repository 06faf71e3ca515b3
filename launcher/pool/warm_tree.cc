#include "launcher/pool/warm_tree.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/error.h"
#include "launcher/lifecycle/idmap_binds.h"
#include "launcher/pool/member.h"
#include "plan/userns.h"

namespace asbx {
namespace {

[[noreturn]] void refuse(const std::string& what, const std::string& step, int err) {
  throw Error(ErrorKind::workspace_rejected, "warm pool: " + what + ": " + step +
                                                 (err ? std::string(": ") + std::strerror(err) : std::string()) +
                                                 "; nothing was started");
}

bool has(const std::vector<std::string>& options, const char* name) {
  return std::find(options.begin(), options.end(), name) != options.end();
}

// The mount attributes podman's options ask for.
std::uint64_t attributes(const std::vector<std::string>& options) {
  std::uint64_t a = 0;
  if (has(options, "ro")) a |= MOUNT_ATTR_RDONLY;
  if (has(options, "nosuid")) a |= MOUNT_ATTR_NOSUID;
  if (has(options, "nodev")) a |= MOUNT_ATTR_NODEV;
  if (has(options, "noexec")) a |= MOUNT_ATTR_NOEXEC;
  return a;
}

// A detached tmpfs with OPTIONS' size, mode and owner (uid=/gid=, or "U": the agent's host ids).
UniqueFd detached_tmpfs(const std::vector<std::string>& options, std::uint64_t attrs, const HostIds& agent,
                        const std::string& what) {
  UniqueFd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
  if (!fs) refuse(what, "fsopen", errno);
  auto set = [&](const std::string& key, const std::string& value) {
    if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key.c_str(), value.c_str(), 0) != 0) refuse(what, "its " + key, errno);
  };
  set("source", "tmpfs");  // as podman's and the seat's tmpfs show in mountinfo
  for (const auto& o : options) {
    auto eq = o.find('=');
    std::string key = o.substr(0, eq);
    if (eq != std::string::npos && (key == "size" || key == "mode" || key == "uid" || key == "gid")) set(key, o.substr(eq + 1));
  }
  if (has(options, "U")) set("uid", std::to_string(agent.uid)), set("gid", std::to_string(agent.gid));
  if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) refuse(what, "making it", errno);
  UniqueFd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, static_cast<unsigned>(attrs)));
  if (!mnt) refuse(what, "fsmount", errno);
  return mnt;
}

// A detached clone of SOURCE's mount (with what is mounted beneath it for "rbind"), its flags set
// and, when IDMAP_NS >= 0, idmapped, before anything can see it.
UniqueFd detached_bind(const Mount& m, int idmap_ns, const std::string& what) {
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW | (has(m.options, "rbind") ? AT_RECURSIVE : 0);
  UniqueFd tree(::open_tree(AT_FDCWD, m.source.c_str(), flags));
  if (!tree) refuse(what, "open_tree", errno);
  struct mount_attr attr{};
  attr.attr_set = attributes(m.options);
  if (idmap_ns >= 0) attr.attr_set |= MOUNT_ATTR_IDMAP, attr.userns_fd = static_cast<std::uint64_t>(idmap_ns);
  if (attr.attr_set && ::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
    refuse(what, "mount_setattr", errno);
  return tree;
}

// The place for a mount at REL beneath DIR_FD, no link followed on the way or at its end (ELOOP);
// made when missing (a directory, or an empty file for a file's bind), as runc makes a mount point,
// and for a top (a mount in no other of the tree) its parents too: they are in the member's own
// seat tmpfs, which nothing else writes.
UniqueFd place(int dir_fd, const std::string& rel, bool dir, bool top, const std::string& what) {
  int fd = open_under(dir_fd, rel, O_PATH | O_CLOEXEC, false, true);
  if (fd >= 0) return UniqueFd(fd);
  if (errno != ENOENT) refuse(what, "its place '" + rel + "'", errno);
  auto slash = rel.rfind('/');
  std::string parent = slash == std::string::npos ? "." : rel.substr(0, slash), name = rel.substr(slash + 1);
  if (top && parent != ".") place(dir_fd, parent, true, true, what);
  UniqueFd up(open_under(dir_fd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC, false, true));
  if (!up) refuse(what, "its place's directory '" + parent + "'", errno);
  int made = dir ? ::mkdirat(up.get(), name.c_str(), 0755) : ::mknodat(up.get(), name.c_str(), S_IFREG | 0600, 0);
  if (made != 0 && errno != EEXIST) refuse(what, "making its place '" + rel + "'", errno);
  fd = open_under(dir_fd, rel, O_PATH | O_CLOEXEC, false, true);
  if (fd < 0) refuse(what, "its place '" + rel + "'", errno);
  return UniqueFd(fd);
}

const Mount* seat_tmpfs_of(const LaunchPlan& plan, const Mount& m) {
  for (const auto& t : plan.isolation.seat_tmpfs)
    if (m.type == "bind" && t.source == m.source) return &t;
  return nullptr;
}

bool idmapped(const LaunchPlan& plan, const Mount& m) {
  return std::any_of(plan.isolation.idmapped_binds.begin(), plan.isolation.idmapped_binds.end(),
                     [&](const Mount& b) { return b.source == m.source; });
}

}  // namespace

std::string warm_tree_path(const std::string& destination, const std::string& root) {
  std::string prefix = root + "/";
  if (destination.rfind(prefix, 0) != 0) return "";
  std::string rel = destination.substr(prefix.size());
  std::size_t at = 0;
  while (at <= rel.size()) {
    std::size_t end = std::min(rel.find('/', at), rel.size());
    std::string part = rel.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") return "";
    at = end + 1;
  }
  return rel;
}

void WarmTree::mount(const LaunchPlan& plan, const std::vector<TreeRoot>& roots) {
  std::vector<UniqueFd> dirs;
  for (const auto& root : roots) {
    dirs.emplace_back(::open(root.seat_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dirs.back()) refuse("the member's dir '" + root.seat_dir + "'", "open", errno);
  }
  UniqueFd ns;
  std::vector<std::string> placed;  // destinations mounted so far
  try {
    for (const auto& m : plan.mounts) {
      std::size_t k = 0;
      std::string rel;
      while (k < roots.size() && (rel = warm_tree_path(m.destination, roots[k].inside)).empty()) ++k;
      if (k == roots.size()) {
        if (m.type == "bind" && m.source_ino != 0)  // the workspace or a git dir: warm_fit sends those cold
          throw Error(ErrorKind::internal, "warm pool: '" + m.destination + "' is in no tree root of the member");
        continue;
      }
      bool top = std::none_of(placed.begin(), placed.end(), [&](const std::string& p) {
        return warm_tree_path(m.destination, p) != "";
      });
      std::string what = "the mount at '" + m.destination + "'";
      UniqueFd made;
      bool dir = true;
      if (m.type == "tmpfs") {
        made = detached_tmpfs(m.options, attributes(m.options), agent_host_ids(plan), what);
      } else if (const Mount* t = seat_tmpfs_of(plan, m)) {
        made = detached_tmpfs(t->options, attributes(m.options), agent_host_ids(plan), what);
      } else {
        if (idmapped(plan, m) && !ns) ns = agent_idmap_namespace(plan);
        made = detached_bind(m, idmapped(plan, m) ? ns.get() : -1, what);
        struct stat st{};
        if (::fstat(made.get(), &st) != 0) refuse(what, "fstat", errno);
        dir = S_ISDIR(st.st_mode);
      }
      UniqueFd at = place(dirs[k].get(), rel, dir, top, what);
      if (top) tops_.push_back(roots[k].seat_dir + "/" + rel);  // from here release() takes it (and its mount point) away
      if (::move_mount(made.get(), "", at.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        refuse(what, "move_mount", errno);
      placed.push_back(m.destination);
    }
  } catch (...) {
    release();
    throw;
  }
}

void WarmTree::release() { detach_places(tops_); }

}  // namespace asbx
