#include "launcher/podman/pool_claim.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/error.h"
#include "base/fdio.h"
#include "base/util.h"

namespace asbx {
namespace {

bool is_container_id(const std::string& id) {
  if (id.size() != 64) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

[[noreturn]] void os_error(const std::string& what, const std::string& name) {
  throw Error(ErrorKind::internal, "warm pool claim: " + what + " " + name + ": " + std::strerror(errno));
}

}  // namespace

bool claim_member(int pool_dir_fd, const std::string& member_id, const PoolClaim& who) {
  if (!is_container_id(member_id))
    throw Error(ErrorKind::internal, "warm pool claim: '" + member_id.substr(0, 80) + "' is not a container id");
  std::string tmp = ".claim-" + random_hex(8);
  int fd = ::openat(pool_dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) os_error("cannot create", tmp);
  std::string text = std::to_string(who.pid) + " " + std::to_string(who.started_unix) + " " +
                     std::to_string(who.timeout_ms) + " " + who.session + "\n";
  bool written = write_all(fd, text);
  ::close(fd);
  std::string name = member_id + ".claim";
  int linked = written ? ::linkat(pool_dir_fd, tmp.c_str(), pool_dir_fd, name.c_str(), 0) : -1;
  int saved = written ? errno : EIO;
  ::unlinkat(pool_dir_fd, tmp.c_str(), 0);
  if (linked == 0) return true;
  if (saved == EEXIST) return false;
  errno = saved;
  os_error("cannot link", name);
}

std::optional<PoolClaim> read_claim(int pool_dir_fd, const std::string& member_id) {
  if (!is_container_id(member_id)) return std::nullopt;
  std::string name = member_id + ".claim";
  int fd = ::openat(pool_dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0 || n == static_cast<ssize_t>(sizeof buf)) return std::nullopt;
  std::istringstream in(std::string(buf, static_cast<std::size_t>(n)));
  PoolClaim claim;
  if (!(in >> claim.pid >> claim.started_unix) || claim.pid <= 0) return std::nullopt;
  if (!(in >> claim.timeout_ms) || claim.timeout_ms < 0) return std::nullopt;
  in >> claim.session;
  return claim;
}

}  // namespace asbx
