#include "launcher/gitguard/scan.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/util.h"
#include "gitscan/config.h"
#include "gitscan/index.h"
#include "mounts/git.h"

namespace asbx {
namespace {

constexpr std::int64_t kMaxConfigBytes = 1 << 20;
constexpr std::int64_t kMaxLinkBytes = 4096;
constexpr std::size_t kMaxDetail = 200;

// Something the sweep found live and could not make harmless: a finding, and the session fails closed.
void left(GitReport& report, GitFinding f) {
  if (report.unswept.size() < kMaxNamedGitEntries) report.unswept.push_back(printable(f.path) + ": " + f.detail);
  report.find(std::move(f));
}

// Setuid/setgid on a file runs as the owner; setgid on a directory hands its group to what the
// owner makes there; world-write lets any seat user change the owner's checkout.
void strip(const WalkEntry& e, GitReport& report) {
  mode_t bits = S_ISREG(e.st.st_mode) ? 06002 : S_ISDIR(e.st.st_mode) ? 02002 : 0;
  if (!(e.st.st_mode & bits)) return;
  std::string why = strip_setid(e.dirfd, e.name, e.st, bits);
  mode_t mode = e.st.st_mode & 07777;
  if (why.empty()) report.strip({e.path, static_cast<unsigned>(mode), static_cast<unsigned>(mode & ~bits)});
  else left(report, {e.path, "setid_left", {}, "setuid/setgid/world-write could not be cleared: " + why});
}

std::int64_t walked(const WalkOutcome& out, GitReport& report) {
  if (!out.unfinished.empty()) report.unswept.push_back(printable(out.unfinished) + ": the walk's hard time limit came first");
  return out.entries;
}

// Hooks a git in that repository would run: executable regular files, not git's own *.sample.
void add_hooks(int dotgit_fd, std::vector<std::string>& keys) {
  UniqueFd hooks(open_beneath(dotgit_fd, "hooks", O_RDONLY | O_DIRECTORY | O_NONBLOCK));
  DIR* dir = hooks ? ::fdopendir(::fcntl(hooks.get(), F_DUPFD_CLOEXEC, 0)) : nullptr;
  if (!dir) return;
  int n = 0;
  while (dirent* d = ::readdir(dir)) {
    std::string name = d->d_name;
    struct stat st{};
    if (++n > 1000 || (name.size() > 7 && name.compare(name.size() - 7, 7, ".sample") == 0)) continue;
    if (::fstatat(hooks.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
      keys.push_back("hooks/" + printable(name, kMaxDetail));
  }
  ::closedir(dir);
}

// The dangerous keys of the repository whose gitdir is `rel` beneath `dirfd`, and its hooks.
std::vector<std::string> repository_keys(int dirfd, const std::string& rel) {
  std::vector<std::string> keys;
  if (auto text = read_file_beneath(dirfd, rel + "/config", kMaxConfigBytes))
    for (auto& k : dangerous_keys(parse_git_config(*text).entries)) keys.push_back(printable(k, kMaxDetail));
  UniqueFd gitdir(open_beneath(dirfd, rel, O_PATH | O_DIRECTORY));
  if (gitdir) add_hooks(gitdir.get(), keys);
  return keys;
}

// "a/b" + "../c" → "a/c", lexically; nullopt when it climbs out of the workspace.
std::optional<std::string> within(const std::string& base, const std::string& value) {
  std::vector<std::string> parts;
  std::string joined = base.empty() ? value : base + "/" + value;
  std::size_t at = 0;
  while (at <= joined.size()) {
    std::size_t slash = joined.find('/', at);
    std::string part = joined.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    if (part == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

struct WorkspaceWalk {
  int ws_fd;
  const GitPlan& git;
  const std::string& container_ws;
  GitReport& report;

  std::string relative(const std::string& path) const {
    return path.size() > git.workspace.path.size() ? path.substr(git.workspace.path.size() + 1) : "";
  }

  // Where a `.git` file at `rel` (workspace-relative) sends git, workspace-relative; nullopt: outside.
  std::optional<std::string> link_target(const std::string& rel, const std::string& value) const {
    for (const std::string& root : {container_ws, git.workspace.path})
      if (value.rfind(root + "/", 0) == 0) return within("", value.substr(root.size() + 1));
    if (!value.empty() && value[0] == '/') return std::nullopt;
    std::string parent = rel.find('/') == std::string::npos ? "" : rel.substr(0, rel.rfind('/'));
    return within(parent, value);
  }

  void dot_git(const WalkEntry& e) {
    std::string rel = relative(e.path), repo = e.path.substr(0, e.path.size() - 5);
    if (S_ISDIR(e.st.st_mode)) {
      report.find({repo, e.depth == 0 ? "repository_created" : "embedded_repository", repository_keys(ws_fd, rel), ""});
      return;
    }
    auto text = S_ISREG(e.st.st_mode) ? read_file_beneath(ws_fd, rel, kMaxLinkBytes) : std::nullopt;
    std::string value = text ? parse_gitdir_file(*text) : "";
    auto target = link_target(rel, value);
    // A submodule checkout of the plain clone: its gitdir is the host's own, read-only inside.
    if (git.shape == "plain" && target && target->rfind(".git/modules/", 0) == 0) return;
    std::vector<std::string> keys = target ? repository_keys(ws_fd, *target) : std::vector<std::string>{};
    std::string detail = value.empty() ? "no 'gitdir:' line" : printable(value, kMaxDetail) + (target ? "" : " (outside the workspace)");
    report.find({repo, e.depth == 0 ? "repository_created" : "gitdir_link", keys, detail});
  }

  // What git's is_git_directory() (setup.c) accepts: a HEAD (a regular file naming a ref or an
  // object, or any symlink: git reads refs/… links and follows the others), and objects/ and refs/
  // there (dirs or links, git follows them) or reached through a `commondir` file.
  void bare(const WalkEntry& e) {
    UniqueFd dir(open_beneath(e.dirfd, e.name, O_PATH | O_DIRECTORY));
    if (!dir) return;
    std::string rel = relative(e.path);
    GitDirProbe probe;
    struct stat st{};
    if (::fstatat(dir.get(), "HEAD", &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    probe.head_link = S_ISLNK(st.st_mode);
    if (S_ISREG(st.st_mode)) probe.head = read_file_beneath(dir.get(), "HEAD", kMaxLinkBytes).value_or("");
    auto present = [&](const char* name) {
      return ::fstatat(dir.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode));
    };
    probe.objects = present("objects");
    probe.refs = present("refs");
    std::optional<std::string> common;
    if (::fstatat(dir.get(), "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0) {
      probe.commondir = true;
      if (auto text = S_ISREG(st.st_mode) ? read_file_beneath(dir.get(), "commondir", kMaxLinkBytes) : std::nullopt) {
        std::string value = text->substr(0, text->find('\n'));
        common = link_target(rel + "/commondir", value);
        if (!common) probe.detail = "commondir " + printable(value, kMaxDetail) + " (outside the workspace)";
        else probe.detail = "commondir " + printable(value, kMaxDetail);
      }
    }
    if (!looks_like_git_directory(probe)) return;
    std::vector<std::string> keys = repository_keys(ws_fd, rel);
    if (common && *common != rel)  // git reads the config (and hooks) of the common dir
      for (auto& k : repository_keys(ws_fd, *common)) keys.push_back(std::move(k));
    report.find({e.path, "bare_repository", keys, probe.detail});
  }

  bool visit(const WalkEntry& e) {
    // A FIFO hangs the host's git that opens it (.gitignore, .gitattributes, .mailmap); git never
    // checks one out, nor a socket or a device. Symlinks are content here: they stay.
    if (std::string kind = special_kind(e.st.st_mode); !kind.empty() && kind != "symlink") {
      if (::unlinkat(e.dirfd, e.name.c_str(), 0) == 0) report.remove({e.path, kind});
      else left(report, {e.path, kind + "_left", {}, std::string("could not remove it: ") + std::strerror(errno)});
      return false;
    }
    strip(e, report);
    std::string rel = relative(e.path);
    bool in_gitdir = rel.rfind(".git/", 0) == 0 || rel.find("/.git/") != std::string::npos;
    if (e.name == ".git" && !in_gitdir) {
      if (e.depth == 0 && git.shape != "none") return false;  // the validated one (its writable dirs are swept)
      dot_git(e);
      return S_ISDIR(e.st.st_mode);
    }
    if (S_ISDIR(e.st.st_mode) && !in_gitdir) bare(e);
    return S_ISDIR(e.st.st_mode);
  }
};

}  // namespace

bool valid_head(const std::string& text) {
  if (text.rfind("ref:", 0) == 0) {
    std::size_t at = text.find_first_not_of(" \t", 4);
    return at != std::string::npos && text.compare(at, 5, "refs/") == 0;
  }
  std::size_t hex = 0;
  while (hex < text.size() && std::isxdigit(static_cast<unsigned char>(text[hex]))) ++hex;
  return hex >= 40;
}

bool looks_like_git_directory(const GitDirProbe& p) {
  return (p.head_link || valid_head(p.head)) && (p.commondir || (p.objects && p.refs));
}

std::int64_t sweep_git_dir(int dir_fd, const std::string& label, const WalkLimits& limits, Quarantine& quarantine,
                           GitReport& report) {
  WalkEvents events{[&](const WalkEntry& e) {
                      std::string kind = special_kind(e.st.st_mode);
                      if (kind.empty()) {
                        strip(e, report);
                        return S_ISDIR(e.st.st_mode);
                      }
                      if (::unlinkat(e.dirfd, e.name.c_str(), 0) == 0) report.remove({e.path, kind});
                      else left(report, {e.path, kind + "_left", {}, std::string("could not remove it: ") + std::strerror(errno)});
                      return false;
                    },
                    [&](const WalkEntry& e, const std::string& why) { quarantine.take(e, why, report); }};
  return walked(walk_tree(dir_fd, label, limits, events), report);
}

std::int64_t scan_workspace(int ws_fd, const GitPlan& git, const std::string& container_ws, const WalkLimits& limits,
                            Quarantine& quarantine, GitReport& report) {
  WorkspaceWalk walk{ws_fd, git, container_ws, report};
  WalkEvents events{[&](const WalkEntry& e) { return walk.visit(e); },
                    [&](const WalkEntry& e, const std::string& why) { quarantine.take(e, why, report); }};
  return walked(walk_tree(ws_fd, git.workspace.path, limits, events), report);
}

void drop_bad_index(int gitdir_fd, const std::string& gitdir, std::size_t hash_len, GitReport& report) {
  struct stat st{};
  if (::fstatat(gitdir_fd, "index", &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) return;
  auto data = read_file_beneath(gitdir_fd, "index", kGitCopyMaxBytes);
  // What cannot be read within the cap cannot be checked: it goes the same way.
  std::string bad = data ? parse_git_index(*data, hash_len).bad_path : "not a regular file of at most 64 MiB";
  if (bad.empty()) return;
  if (::unlinkat(gitdir_fd, "index", 0) == 0) report.remove({gitdir + "/index", "index"});
  else left(report, {gitdir + "/index", "index_left", {}, bad + "; could not remove it: " + std::strerror(errno)});
}

void find_operation_in_progress(int gitdir_fd, const std::string& gitdir, GitReport& report) {
  const char* const kStates[][2] = {{"rebase-merge", "a rebase"}, {"rebase-apply", "a rebase"},
                                    {"sequencer", "a cherry-pick or revert"}};
  for (const auto& [name, what] : kStates) {
    struct stat st{};
    if (::fstatat(gitdir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
      report.find({gitdir, "operation_in_progress", {}, what});
  }
}

}  // namespace asbx
