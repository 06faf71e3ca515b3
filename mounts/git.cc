#include "mounts/git.h"

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "launcher/error.h"
#include "launcher/util.h"
#include "mounts/workspace.h"

namespace asbx {
namespace {

// Paths the container's own layout owns: a git dir may never be bound over them.
const std::vector<std::string> kReserved = {"/proc", "/sys", "/dev", "/etc", "/usr", "/run", "/sandbox",
                                            "/sandbox-secrets", "/sandbox-report"};

[[noreturn]] void unmountable(const std::string& ws, const std::string& why) {
  throw Error(ErrorKind::git_unmountable, "workspace '" + ws + "': " + why);
}

std::string trim(std::string s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string roots_text(const std::vector<std::string>& roots) {
  return roots.empty() ? "none configured" : join(roots);
}

// realpath, a directory, under a permitted root (or inside the workspace), not reserved.
std::string checked_dir(const std::string& ws, const std::string& what, const std::string& path,
                        const std::vector<std::string>& roots) {
  std::string real = resolve_path(path);
  struct stat st{};
  if (real.empty() || ::stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    unmountable(ws, what + " '" + path + "' does not resolve to a directory");
  bool permitted = real == ws || path_is_under(real, ws);
  for (const auto& root : roots) {
    std::string r = resolve_path(root);
    permitted = permitted || (!r.empty() && path_is_under(real, r));
  }
  if (!permitted) unmountable(ws, what + " '" + real + "' lies outside the permitted git roots (" + roots_text(roots) + ")");
  for (const auto& reserved : kReserved)
    if (real == reserved || path_is_under(real, reserved)) unmountable(ws, what + " '" + real + "' is a reserved path");
  return real;
}

}  // namespace

std::string parse_gitdir_file(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.rfind("gitdir:", 0) != 0) return "";
  return trim(line.substr(7));
}

std::string join_git_path(const std::string& base, const std::string& value) {
  return !value.empty() && value[0] == '/' ? value : base + "/" + value;
}

std::vector<Mount> plan_git_mounts(const std::string& ws, const std::vector<std::string>& git_roots) {
  std::string dotgit = ws + "/.git";
  struct stat st{};
  if (::lstat(dotgit.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return {};
  if (!S_ISREG(st.st_mode)) unmountable(ws, "'.git' is neither a directory nor a gitdir file");
  std::string gitdir_value = parse_gitdir_file(first_line(dotgit) + "\n");
  if (gitdir_value.empty()) unmountable(ws, "'.git' is a file without a 'gitdir:' line");
  std::string gitdir = checked_dir(ws, "gitdir", join_git_path(ws, gitdir_value), git_roots);
  std::string common_value = trim(first_line(gitdir + "/commondir"));
  if (common_value.empty()) unmountable(ws, "gitdir '" + gitdir + "' has no 'commondir' file");
  std::string common = checked_dir(ws, "commondir", join_git_path(gitdir, common_value), git_roots);
  std::vector<Mount> mounts;
  for (const auto& dir : {common, gitdir})
    if (dir != ws && !path_is_under(dir, ws)) mounts.push_back({"bind", dir, dir, {"rbind", "rw"}});
  if (mounts.size() == 2 && mounts[0].source == mounts[1].source) mounts.pop_back();
  return mounts;
}

}  // namespace asbx
