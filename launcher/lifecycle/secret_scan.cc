#include "launcher/lifecycle/secret_scan.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"
#include "credtable/placeholder.h"

namespace asbx {
namespace {

constexpr std::size_t kChunk = 256 * 1024;
constexpr const char* kWithheld = "(a name holding the value)";

std::size_t longest(const std::vector<std::string>& values) {
  std::size_t n = 0;
  for (const auto& v : values) n = std::max(n, v.size());
  return n;
}

// Reads the file in chunks, keeping the last (longest − 1) bytes between them.
bool file_holds(int fd, const std::vector<std::string>& values, ScanBudget& budget) {
  std::size_t keep = longest(values) - 1;
  std::string window, chunk(kChunk, '\0');
  while (true) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n <= 0) return false;
    budget.bytes -= n;
    window.append(chunk.data(), static_cast<std::size_t>(n));
    if (holds_any(window, values)) return true;
    if (budget.bytes < 0) return budget.exhausted = true, false;
    if (window.size() > keep) window.erase(0, window.size() - keep);
  }
}

void walk(int dir_fd, const std::string& label, const std::vector<std::string>& values, ScanBudget& budget, int depth,
          std::vector<std::string>& found) {
  if (depth > ScanBudget::kMaxDepth) {  // not searched: said in the record's warnings, never silent
    if (budget.too_deep.size() < 10) budget.too_deep.push_back(printable(label));
    return;
  }
  int own = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = own >= 0 ? ::fdopendir(own) : nullptr;
  if (!dir) {
    if (own >= 0) ::close(own);
    return;
  }
  for (dirent* e; (e = ::readdir(dir)) != nullptr;) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (--budget.files < 0) {
      budget.exhausted = true;
      break;
    }
    // a name (a file, a directory, a git ref) carries the value as well as contents do; the
    // finding, and every path below it, shows a stand-in instead of that name
    bool named = holds_any(name, values);
    std::string shown = label + "/" + (named ? kWithheld : name);
    if (named) found.push_back(printable(shown));
    struct stat st{};
    if (::fstatat(own, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISLNK(st.st_mode)) {  // its target, read as text, never followed
      char target[4097];
      ssize_t n = ::readlinkat(own, name.c_str(), target, sizeof target);
      if (n > 0 && holds_any(std::string(target, static_cast<std::size_t>(n)), values))
        found.push_back(printable(shown) + " (its link target)");
      continue;
    }
    int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
    if (S_ISDIR(st.st_mode)) {
      int sub = ::openat(own, name.c_str(), flags | O_DIRECTORY);
      if (sub < 0) continue;
      walk(sub, shown, values, budget, depth + 1, found);
      ::close(sub);
    } else if (S_ISREG(st.st_mode)) {
      int fd = ::openat(own, name.c_str(), flags);
      if (fd < 0) continue;
      // the agent chose the names: a newline or an escape must not forge a line on the caller's stderr
      if (file_holds(fd, values, budget) && !named) found.push_back(printable(shown));
      ::close(fd);
    }
  }
  ::closedir(dir);
}

}  // namespace

ScratchPins pin_scratch(const ContainerRoot& root) {
  ScratchPins pins;
  for (const char* path : kScratchDirs) {
    UniqueFd fd(open_under(root.fd(), path, O_PATH | O_DIRECTORY, true, true));
    if (!fd)  // a scan that could not search them would pass for a clean one: fail before start
      throw Error(ErrorKind::internal, std::string("cannot open the container's ") + path + " for the secret scan: " +
                                           std::strerror(errno));
    pins.emplace_back(path, std::move(fd));
  }
  return pins;
}

bool holds_any(const std::string& text, const std::vector<std::string>& values) {
  return std::any_of(values.begin(), values.end(),
                     [&](const std::string& v) { return !v.empty() && text.find(v) != std::string::npos; });
}

std::vector<std::string> scan_tree(int dir_fd, const std::string& label, const std::vector<std::string>& values,
                                   ScanBudget& budget) {
  std::vector<std::string> found;
  if (dir_fd < 0 || values.empty() || longest(values) == 0) return found;
  walk(dir_fd, label, values, budget, 0, found);
  return found;
}

std::vector<std::string> exposure_values(const std::vector<std::string>& reals) {
  std::vector<std::string> out;
  for (const auto& real : reals)
    for (auto& form : exposure_forms(real))
      if (!form.empty() && std::find(out.begin(), out.end(), form) == out.end()) out.push_back(std::move(form));
  return out;
}

void OutputScan::arm(std::vector<std::string> values) {
  values_ = std::move(values);
  keep_ = values_.empty() ? 0 : longest(values_) - 1;
}

void OutputScan::feed(int stream, std::string_view bytes) {
  int i = stream == 2 ? 1 : 0;
  if (values_.empty() || found_[i] || left_ < 0) return;
  left_ -= static_cast<std::int64_t>(bytes.size());
  std::string window = carry_[i];
  window.append(bytes);
  found_[i] = holds_any(window, values_);
  carry_[i] = window.size() > keep_ ? window.substr(window.size() - keep_) : window;
}

std::vector<std::string> OutputScan::found() const {
  std::vector<std::string> out;
  if (found_[0]) out.push_back("(stdout)");
  if (found_[1]) out.push_back("(stderr)");
  return out;
}

}  // namespace asbx
