#include "launcher/lifecycle/range_claim.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/dir_walk.h"
#include "base/error.h"
#include "plan/userns.h"

namespace asbx {
namespace {

void add_slots_of(const std::string& status_path, std::set<std::int64_t>& out) {
  std::ifstream in(status_path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Uid:", 0) != 0 && line.rfind("Gid:", 0) != 0) continue;
    std::istringstream ids(line.substr(4));
    for (std::int64_t id; ids >> id;)
      if (id >= kUsernsHostBase && id < range_base(kUsernsSlots)) out.insert((id - kUsernsHostBase) / kUsernsSize);
  }
}

}  // namespace

std::set<std::int64_t> range_slots_of_processes(const std::string& proc) {
  std::set<std::int64_t> out;
  DIR* d = ::opendir(proc.c_str());
  if (!d) throw Error(ErrorKind::internal, "cannot read " + proc + " for the user namespace ranges in use: " + std::strerror(errno));
  while (dirent* e = ::readdir(d))
    if (std::isdigit(static_cast<unsigned char>(e->d_name[0]))) add_slots_of(proc + "/" + e->d_name + "/status", out);
  ::closedir(d);
  return out;
}

RangeClaim::RangeClaim(const std::string& dir, const std::string& proc) {
  std::string why;
  UniqueFd at = open_dir_path(dir, true, why);
  if (!at) throw Error(ErrorKind::internal, "cannot create the user namespace range directory " + dir + ": " + why);
  std::set<std::int64_t> busy = range_slots_of_processes(proc);
  for (std::int64_t k = 0; k < kUsernsSlots; ++k) {
    if (busy.count(k)) continue;
    std::string name = std::to_string(k) + ".lock";
    int fd = ::openat(at.get(), name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw Error(ErrorKind::internal, "cannot open " + dir + "/" + name + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      slot_ = k;
      return;
    }
    ::close(fd);
  }
  throw Error(ErrorKind::seat_full, "seat full: all " + std::to_string(kUsernsSlots) +
                                        " user namespace ranges are held by live sessions (" + dir + ")");
}

RangeClaim::~RangeClaim() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace asbx
