#include "launcher/lifecycle/idmap_binds.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/error.h"
#include "plan/userns.h"

namespace asbx {
namespace {

[[noreturn]] void refuse(const std::string& what, const std::string& step, int err, const std::string& hint = "") {
  throw Error(ErrorKind::isolation_unavailable,
              "user namespace (user_namespace = \"range\"): " + what + ": " + step +
                  (err ? std::string(": ") + std::strerror(err) : std::string()) + "; nothing was started" + hint);
}

bool put(pid_t pid, const char* file, const std::string& text) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd && ::write(fd.get(), text.data(), text.size()) == ssize_t(text.size());
}

// A user namespace whose only ids are on-disk `id` → host `host_id` (uids and gids), made by a
// child that only waits and is gone before this returns; its fd keeps the namespace.
UniqueFd idmap_namespace(const HostIds& id, const HostIds& host) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) refuse("its id map", "pipe", errno);
  pid_t pid = ::fork();
  if (pid < 0) refuse("its id map", "fork", errno);
  if (pid == 0) {
    char ok = ::unshare(CLONE_NEWUSER) == 0 ? 1 : 0;
    if (::write(ready[1], &ok, 1) != 1) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char ok = 0;
  bool made = ::read(ready[0], &ok, 1) == 1 && ok == 1;
  ::close(ready[0]);
  UniqueFd ns;
  if (made && put(pid, "setgroups", "deny\n") &&
      put(pid, "uid_map", std::to_string(id.uid) + " " + std::to_string(host.uid) + " 1\n") &&
      put(pid, "gid_map", std::to_string(id.gid) + " " + std::to_string(host.gid) + " 1\n"))
    ns = UniqueFd(::open(("/proc/" + std::to_string(pid) + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
  int err = errno;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  if (!ns) refuse("its id map", "a user namespace holding it", made ? err : 0);
  return ns;
}

// A detached clone of the mount at `path`, idmapped through the user namespace `ns`. On failure: no
// fd, the step that failed in `step` and its errno in `err`.
UniqueFd idmapped_clone(const std::string& path, int ns, std::string& step, int& err) {
  UniqueFd tree(::open_tree(AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW));
  if (!tree) {
    step = "open_tree", err = errno;
    return tree;
  }
  struct mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_IDMAP;
  attr.userns_fd = static_cast<std::uint64_t>(ns);
  if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) == 0) return tree;
  err = errno;
  step = err == EINVAL ? "its filesystem cannot be idmapped (mount_setattr)" : "mount_setattr";
  return UniqueFd();
}

}  // namespace

std::string idmap_problem(const std::string& path) {
  try {
    const auto range = static_cast<unsigned>(kUsernsHostBase + 1000);  // as a session's agent 1000:1000
    UniqueFd ns = idmap_namespace({1000, 1000}, {range, range});
    std::string step;
    int err = 0;
    if (idmapped_clone(path, ns.get(), step, err)) return "";
    return step + ": " + std::strerror(err);
  } catch (const Error& e) {
    return e.what();
  }
}

UniqueFd agent_idmap_namespace(const LaunchPlan& plan) {
  unsigned uid = 0, gid = 0;
  std::sscanf(plan.user.c_str(), "%u:%u", &uid, &gid);
  return idmap_namespace({uid, gid}, agent_host_ids(plan));
}

void IdmapBinds::stage(const LaunchPlan& plan) {
  if (plan.isolation.idmapped_binds.empty()) return;
  UniqueFd ns = agent_idmap_namespace(plan);
  try {
    for (const auto& b : plan.isolation.idmapped_binds) {
      std::string what = "the bind of '" + b.source + "'";
      std::string step;
      int err = 0;
      UniqueFd tree = idmapped_clone(b.source, ns.get(), step, err);
      if (!tree)
        refuse(what, step, err, err != EINVAL ? "" : " (user_namespace = \"host\" in " + plan.waiver_source +
                                                        " runs such workspaces without a user namespace of their own)");
      struct stat st{};
      if (::fstat(tree.get(), &st) != 0) refuse(what, "fstat", errno);
      int made = S_ISDIR(st.st_mode) ? ::mkdir(b.destination.c_str(), 0700)
                                     : ::mknod(b.destination.c_str(), S_IFREG | 0600, 0);
      if (made != 0) refuse(what, "its staging path '" + b.destination + "'", errno);
      if (::move_mount(tree.get(), "", AT_FDCWD, b.destination.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) {
        int err = errno;
        S_ISDIR(st.st_mode) ? ::rmdir(b.destination.c_str()) : ::unlink(b.destination.c_str());
        refuse(what, "move_mount", err);
      }
      staged_.push_back(b.destination);
    }
  } catch (...) {
    detach();
    throw;
  }
}

void detach_places(std::vector<std::string>& places) {
  for (const auto& path : places) {
    ::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
    if (::rmdir(path.c_str()) != 0 && errno == ENOTDIR) ::unlink(path.c_str());
  }
  places.clear();
}

void IdmapBinds::detach() { detach_places(staged_); }

}  // namespace asbx
