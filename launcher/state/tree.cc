#include "launcher/state/tree.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/dir_walk.h"
#include "state/rules.h"

namespace asbx {
namespace {

std::string errno_text() { return std::strerror(errno); }

// `relative` split at its last '/': the parent ("" for the tree's top) and the name.
std::pair<std::string, std::string> split_last(const std::string& relative) {
  auto slash = relative.rfind('/');
  if (slash == std::string::npos) return {"", relative};
  return {relative.substr(0, slash), relative.substr(slash + 1)};
}

}  // namespace

std::string StateTree::create(const std::string& dir, const std::string& id) {
  dir_ = dir;
  id_ = id;
  std::string why;
  parent_ = open_dir_path(dir, true, why);  // made as needed, never through a planted symlink
  if (!parent_) return why;
  struct stat st{};
  if (::fstatat(parent_.get(), id.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return "'" + final_path() + "' already exists";
  if (::mkdirat(parent_.get(), state_partial_name(id).c_str(), 0700) != 0)
    return "cannot make '" + dir + "/" + state_partial_name(id) + "': " + errno_text();
  root_ = UniqueFd(open_beneath(parent_.get(), state_partial_name(id), O_RDONLY | O_DIRECTORY));
  if (!root_) return "cannot open '" + dir + "/" + state_partial_name(id) + "': " + errno_text();
  return "";
}

std::string StateTree::make_dir(const std::string& relative) {
  auto [parent, name] = split_last(relative);
  UniqueFd at(open_beneath(root_.get(), parent, O_PATH | O_DIRECTORY));
  if (!at || ::mkdirat(at.get(), name.c_str(), 0700) != 0) return "cannot make it here: " + errno_text();
  UniqueFd made(open_beneath(at.get(), name, O_RDONLY | O_DIRECTORY));
  if (!made || ::fchmod(made.get(), kStateDirMode) != 0) return "cannot set its mode here: " + errno_text();
  return "";
}

std::string StateTree::remove_file(const std::string& relative) {
  auto [parent, name] = split_last(relative);
  UniqueFd at(open_beneath(root_.get(), parent, O_PATH | O_DIRECTORY));
  if (!at || ::unlinkat(at.get(), name.c_str(), 0) != 0) return "cannot remove it: " + errno_text();
  return "";
}

UniqueFd StateTree::new_file(const std::string& relative, std::string& why) {
  auto [parent, name] = split_last(relative);
  UniqueFd at(open_beneath(root_.get(), parent, O_PATH | O_DIRECTORY));
  UniqueFd file(at ? open_beneath(at.get(), name, O_WRONLY | O_CREAT | O_EXCL, 0600) : -1);
  if (!file) why = "cannot create it here: " + errno_text();
  return file;
}

std::string StateTree::finish() {
  if (::fchmod(root_.get(), kStateDirMode) != 0) return "cannot set the mode of the tree: " + errno_text();
  if (::renameat2(parent_.get(), state_partial_name(id_).c_str(), parent_.get(), id_.c_str(), RENAME_NOREPLACE) != 0)
    return "cannot rename '" + dir_ + "/" + state_partial_name(id_) + "' to '" + final_path() + "': " + errno_text();
  root_ = UniqueFd();
  return "";
}

}  // namespace asbx
