#include "launcher/podman/container_root.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"

namespace asbx {

namespace {

constexpr int kMaxInterpreterDepth = 4;  // as the kernel's binfmt_script recursion

bool executable_by(const struct stat& st, unsigned uid, unsigned gid) {
  if (st.st_uid == uid) return st.st_mode & S_IXUSR;
  if (st.st_gid == gid) return st.st_mode & S_IXGRP;
  return st.st_mode & S_IXOTH;
}

// The interpreter of a "#!" script (its first word), "" when the file is no script.
std::string interpreter_of(int fd) {
  char head[256];
  ssize_t n = ::pread(fd, head, sizeof head, 0);
  if (n < 2 || head[0] != '#' || head[1] != '!') return "";
  std::string line(head + 2, static_cast<std::size_t>(n - 2));
  line = line.substr(0, line.find('\n'));
  auto first = line.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return line.substr(first, line.find_first_of(" \t", first) - first);
}

std::vector<std::string> split_path_env(const std::string& path_env) {
  std::vector<std::string> dirs;
  std::size_t at = 0;
  for (;;) {
    auto colon = path_env.find(':', at);
    dirs.push_back(path_env.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) return dirs;
    at = colon + 1;
  }
}

}  // namespace

ContainerRoot::ContainerRoot(long pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/root";
  root_ = UniqueFd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_)
    throw Error(ErrorKind::internal, "cannot open the initialised container's root (" + path + "): " +
                                         std::strerror(errno));
}

std::optional<struct stat> ContainerRoot::stat_no_symlinks(const std::string& path) const {
  UniqueFd fd(open_under(root_.get(), path, O_PATH | O_NOFOLLOW, true, true));
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0) return std::nullopt;
  return st;
}

CommandVerdict ContainerRoot::check_file(const std::string& path, unsigned uid, unsigned gid, int depth) const {
  UniqueFd fd(open_under(root_.get(), path, O_RDONLY | O_NONBLOCK | O_NOCTTY, true, false));
  if (!fd) return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? CommandVerdict::not_found
                                                                        : CommandVerdict::not_executable;
  struct stat st{};
  struct statvfs fs{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !executable_by(st, uid, gid))
    return CommandVerdict::not_executable;
  if (::fstatvfs(fd.get(), &fs) == 0 && (fs.f_flag & ST_NOEXEC)) return CommandVerdict::not_executable;
  std::string interpreter = interpreter_of(fd.get());
  if (interpreter.empty()) return CommandVerdict::found;
  if (interpreter[0] != '/' || depth >= kMaxInterpreterDepth) return CommandVerdict::not_found;
  return check_file(interpreter, uid, gid, depth + 1);
}

CommandVerdict ContainerRoot::resolve_command(const std::string& argv0, const std::string& path_env,
                                              const std::string& workdir, unsigned uid, unsigned gid) const {
  if (argv0.empty()) return CommandVerdict::not_found;
  if (argv0.find('/') != std::string::npos)
    return check_file(argv0[0] == '/' ? argv0 : workdir + "/" + argv0, uid, gid, 0);
  // As execvp: the first executable match wins; a match that cannot be executed is
  // remembered (EACCES) and reported only when nothing else is found.
  CommandVerdict seen = CommandVerdict::not_found;
  for (const auto& dir : split_path_env(path_env)) {
    CommandVerdict v = check_file((dir.empty() ? workdir : dir) + "/" + argv0, uid, gid, 0);
    if (v == CommandVerdict::found) return v;
    if (v == CommandVerdict::not_executable) seen = v;
  }
  return seen;
}

}  // namespace asbx
