#include "plan/netns_check.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "base/beneath.h"
#include "base/error.h"
#include "plan/network.h"
#include "base/util.h"

namespace asbx {
namespace {

constexpr const char* kNetnsDir = "/run/netns/";

[[noreturn]] void refuse(const std::string& origin, const std::string& spec, const std::string& why) {
  throw Error(ErrorKind::usage, origin + ": '" + spec + "' is refused: " + why);
}

bool listed(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The seat's own stack: init's namespace and the launcher's (the same on a plain seat).
bool is_seat_netns(const struct stat& st) {
  for (const char* own : {"/proc/1/ns/net", "/proc/self/ns/net"}) {
    struct stat o{};
    if (::stat(own, &o) == 0 && o.st_dev == st.st_dev && o.st_ino == st.st_ino) return true;
  }
  return false;
}

void check_netns_path(const std::string& spec, const std::string& path, const std::string& origin) {
  std::string name = path.rfind(kNetnsDir, 0) == 0 ? path.substr(std::strlen(kNetnsDir)) : "";
  if (!is_plain_name(name, 128))
    refuse(origin, spec, "only namespaces directly in /run/netns/ or listed in the seat config's netns_allowed");
  // No symlink anywhere on the way (RESOLVE_NO_SYMLINKS), no magic link (/proc/*/ns/*).
  UniqueFd slash(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  UniqueFd fd(open_under(slash.get(), path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, false, true));
  if (!fd && errno == ENOENT) return;  // podman refuses a missing namespace itself; only root creates one there
  if (!fd && errno == ELOOP) refuse(origin, spec, "a symlink is on its path");
  if (!fd) refuse(origin, spec, std::string("cannot be opened: ") + std::strerror(errno));
  struct statfs fs{};
  struct stat st{};
  if (::fstatfs(fd.get(), &fs) != 0 || fs.f_type != NSFS_MAGIC || ::fstat(fd.get(), &st) != 0)
    refuse(origin, spec, "it is not a namespace (nsfs)");
  int type = ::ioctl(fd.get(), NS_GET_NSTYPE);
  if (type >= 0 && type != CLONE_NEWNET) refuse(origin, spec, "it is not a network namespace");
  if (is_seat_netns(st)) refuse(origin, spec, "it is the seat's own network namespace");
}

}  // namespace

void check_network_reach(const std::string& spec, const SeatConfig& seat, const std::string& origin) {
  NetworkMode mode = parse_network(spec, origin);
  if (mode.nsmode == "path" && !listed(seat.netns_allowed, mode.value)) check_netns_path(spec, mode.value, origin);
  if (mode.nsmode == "container" && !listed(seat.network_containers, mode.value))
    refuse(origin, spec, "only containers listed in the seat config's network_containers" +
                             std::string(seat.path.empty() ? "" : " (" + seat.path + ")"));
}

}  // namespace asbx
