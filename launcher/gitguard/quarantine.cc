#include "launcher/gitguard/quarantine.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

namespace asbx {

std::string Quarantine::open_dir() {
  if (dir_) return "";
  if (base_fd_ < 0) return "there is no directory to set it aside in";
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::string name = ".asbx-quarantine-" + random_hex(6);
    if (::mkdirat(base_fd_, name.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;  // the agent may have guessed a name: never reuse one
      return "cannot make a quarantine directory in '" + base_path_ + "': " + std::strerror(errno);
    }
    UniqueFd fd(open_beneath(base_fd_, name, O_PATH | O_DIRECTORY));
    struct stat st{};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
      return "the quarantine directory '" + base_path_ + "/" + name + "' is not the one just made";
    dir_ = std::move(fd);
    dir_path_ = base_path_ + "/" + name;
    return "";
  }
  return "cannot make a quarantine directory in '" + base_path_ + "': every name taken";
}

void Quarantine::take(const WalkEntry& e, const std::string& why, GitReport& report) {
  std::string path = printable(e.path);
  std::string err = open_dir();
  if (err.empty()) {
    std::string to = std::to_string(taken_ + 1);
    struct stat st{};
    if (::renameat(e.dirfd, e.name.c_str(), dir_.get(), to.c_str()) != 0)
      err = std::string("cannot move it: ") + std::strerror(errno);
    else if (::fstatat(dir_.get(), to.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_ino != e.st.st_ino)
      err = "what was moved is not the directory seen";
    else {
      ++taken_;
      if (report.quarantined.size() < kMaxNamedGitEntries) report.quarantined.push_back({path, dir_path_ + "/" + to, why});
      else ++report.unnamed;  // all of them are in the one quarantine directory the record names
      return;
    }
  }
  if (report.unswept.size() < kMaxNamedGitEntries) report.unswept.push_back(path + " (" + why + "): not swept and not set aside: " + err);
  else ++report.unnamed;
}

}  // namespace asbx
