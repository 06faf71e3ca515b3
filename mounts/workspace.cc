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

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "'" : ", '") + item + "'";
  return out;
}

// The permitted roots that exist, resolved; a root missing on this seat permits nothing. With one
// root it must exist (the check cannot be made otherwise). Two roots of which one holds the other
// would let a workspace of the outer contain the inner's workspaces: the seat config is refused.
std::vector<std::string> resolved_roots(const std::string& requested, const std::vector<std::string>& roots) {
  std::vector<std::string> out;
  for (const auto& root : roots) {
    std::string r = resolve_path(root);
    if (r.empty() && roots.size() == 1)
      reject(requested, "cannot be checked: the permitted root '" + root + "' does not exist");
    if (r.empty()) continue;
    for (const auto& other : out)
      if (r == other || path_is_under(r, other) || path_is_under(other, r))
        throw Error(ErrorKind::config, "the seat's workspace roots '" + other + "' and '" + r +
                                           "' overlap: a workspace of one would contain the other's");
    out.push_back(r);
  }
  if (out.empty()) reject(requested, "cannot be checked: none of the permitted roots " + quoted_list(roots) + " exists");
  return out;
}

// The root `real` lies strictly under, or "".
std::string root_holding(const std::string& real, const std::vector<std::string>& roots) {
  for (const auto& root : roots)
    if (path_is_under(real, root)) return root;
  return "";
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

WorkspaceMount plan_workspace(const std::string& given, const std::vector<std::string>& permitted_roots) {
  std::string requested = given;
  while (requested.size() > 1 && requested.back() == '/') requested.pop_back();
  if (requested.empty() || requested[0] != '/') reject(requested, "must be an absolute path");
  std::vector<std::string> roots = resolved_roots(requested, permitted_roots);
  std::string real = resolve_path(requested);
  if (real.empty()) reject(requested, std::string("does not resolve: ") + std::strerror(errno));
  if (real != requested)
    reject(requested, "is not canonical (it resolves to '" + real + "'): symlinks and '..' are refused");
  std::string root = root_holding(real, roots);
  if (root.empty() && roots.size() == 1)
    reject(requested, "resolves to '" + real + "', outside the permitted root '" + roots[0] + "'");
  if (root.empty()) reject(requested, "resolves to '" + real + "', outside the permitted roots " + quoted_list(roots));
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

WorkspaceMount plan_workspace(const std::string& requested, const std::string& permitted_root) {
  return plan_workspace(requested, std::vector<std::string>{permitted_root});
}

std::string current_checkout(const std::string& cwd, const std::vector<std::string>& roots) {
  std::string here = resolve_path(cwd);
  if (here.empty()) return cwd;  // plan_workspace names why
  std::string limit = "/";  // outside every root: the checkout is still named in the refusal
  for (const auto& r : roots) {
    std::string resolved = resolve_path(r);
    if (!resolved.empty() && path_is_under(here, resolved)) limit = resolved;
  }
  for (std::string dir = here; !dir.empty() && dir != limit; dir = dir.substr(0, dir.rfind('/'))) {
    struct stat st{};
    if (::lstat((dir + "/.git").c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) return dir;
  }
  return here;
}

}  // namespace asbx
