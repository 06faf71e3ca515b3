#include "mounts/workspace.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

#include "base/error.h"

namespace asbx {
namespace {

[[noreturn]] void reject(const std::string& requested, const std::string& why) {
  throw Error(ErrorKind::workspace_rejected, "workspace '" + requested + "' " + why);
}

}  // namespace

std::string resolve_path(const std::string& path) {
  char buf[PATH_MAX];
  if (!::realpath(path.c_str(), buf)) return "";
  return buf;
}

bool path_is_under(const std::string& resolved, const std::string& resolved_root) {
  if (resolved_root == "/") return true;
  return resolved.size() > resolved_root.size() && resolved.compare(0, resolved_root.size(), resolved_root) == 0 &&
         resolved[resolved_root.size()] == '/';
}

WorkspaceMount plan_workspace(const std::string& given, const std::string& permitted_root) {
  std::string requested = given;
  while (requested.size() > 1 && requested.back() == '/') requested.pop_back();
  if (requested.empty() || requested[0] != '/') reject(requested, "must be an absolute path");
  std::string root = resolve_path(permitted_root);
  if (root.empty()) reject(requested, "cannot be checked: the permitted root '" + permitted_root + "' does not exist");
  std::string real = resolve_path(requested);
  if (real.empty()) reject(requested, std::string("does not resolve: ") + std::strerror(errno));
  if (real != requested)
    reject(requested, "is not canonical (it resolves to '" + real + "'): symlinks and '..' are refused");
  if (!path_is_under(real, root))
    reject(requested, "resolves to '" + real + "', outside the permitted root '" + root + "'");
  if (real.find('/', root.size() + 1) != std::string::npos)
    reject(requested, "is nested below '" + real.substr(0, real.find('/', root.size() + 1)) +
                          "': a workspace must be a direct child of the permitted root '" + root +
                          "' (one inside another would show one session's files to another)");
  struct stat st{};
  if (::stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) reject(requested, "is not a directory");
  std::string name = real.substr(real.rfind('/') + 1);
  WorkspaceMount w;
  w.host_path = real;
  w.container_path = "/sandbox/workspaces/" + name;
  w.mount = Mount{"bind", real, w.container_path, {"rbind", "rw"}};
  w.mount.source_dev = st.st_dev;
  w.mount.source_ino = st.st_ino;
  return w;
}

}  // namespace asbx
