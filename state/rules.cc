#include "state/rules.h"

#include <sstream>
#include <vector>

#include "base/units.h"

namespace asbx {
namespace {

std::vector<std::string> parts_of(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (;;) {
    auto slash = path.find('/', at);
    parts.push_back(path.substr(at, slash == std::string::npos ? std::string::npos : slash - at));
    if (slash == std::string::npos) return parts;
    at = slash + 1;
  }
}

// `inner` is `outer` or lies below it, compared part by part (".codex/a" is not inside ".codex/ab").
bool within(const std::string& inner, const std::string& outer) {
  return inner == outer || (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
                            inner[outer.size()] == '/');
}

}  // namespace

bool is_home_relative_path(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (const auto& part : parts_of(path))
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

std::string state_credential_conflict(const std::string& state_path, const std::string& credential) {
  if (state_path == credential) return "is the credential file '" + credential + "'";
  if (within(credential, state_path)) return "contains the credential file '" + credential + "'";
  if (within(state_path, credential)) return "lies inside the credential file '" + credential + "'";
  return "";
}

bool is_safe_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  for (unsigned char c : name)
    if (c == '/' || c < 0x20 || c == 0x7f) return false;
  return true;
}

bool is_safe_relative(const std::string& path) {
  if (path.empty() || path.size() > kMaxStatePath) return false;
  auto parts = parts_of(path);
  if (parts.size() > static_cast<std::size_t>(kMaxStateDepth) + 8) return false;
  for (const auto& part : parts)
    if (!is_safe_name(part)) return false;
  return true;
}

std::string kind_refusal(mode_t mode) {
  if (S_ISREG(mode) || S_ISDIR(mode)) return "";
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "fifo";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "not a regular file or directory";
}

std::string file_refusal(const struct stat& st, std::int64_t files_so_far, std::int64_t bytes_so_far,
                         const StateLimits& limits) {
  if (st.st_nlink > 1) return "hardlink (" + std::to_string(st.st_nlink) + " links)";
  return cap_refusal(st.st_size, files_so_far, bytes_so_far, limits);
}

std::string cap_refusal(std::int64_t size, std::int64_t files_so_far, std::int64_t bytes_so_far,
                        const StateLimits& limits) {
  if (files_so_far >= limits.max_files)
    return "over the file-count cap (" + std::to_string(limits.max_files) + " files)";
  if (size > limits.max_bytes - bytes_so_far)
    return "over the size cap (" + format_size(size) + "; " + format_size(limits.max_bytes - bytes_so_far) +
           " of " + format_size(limits.max_bytes) + " left)";
  return "";
}

std::string state_partial_name(const std::string& id) { return "." + id + ".partial"; }

}  // namespace asbx
