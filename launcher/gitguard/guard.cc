#include "launcher/gitguard/guard.h"

#include <algorithm>
#include <cerrno>
#include <tuple>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"
#include "gitscan/advice.h"
#include "gitscan/index.h"
#include "launcher/gitguard/scan.h"
#include "launcher/gitguard/walk.h"
#include "launcher/lifecycle/pump.h"

namespace asbx {
namespace {

// The history scan's own budget (it informs; the sweep's limits are plan.git.sweep).
constexpr std::int64_t kHistoryBudgetMs = 30'000;

// What is left of the session's disk budget at its end (its record), for the files copied back.
std::int64_t disk_room(const nlohmann::json& disk) {
  if (!disk.is_object() || !disk.contains("budget_bytes") || !disk["budget_bytes"].is_number()) return INT64_MAX;
  return disk["budget_bytes"].get<std::int64_t>() - disk.value("added_bytes", std::int64_t{0});
}

UniqueFd open_pinned(const PinnedDir& d, ErrorKind kind) {
  UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  UniqueFd fd(root ? open_under(root.get(), d.path, O_PATH | O_DIRECTORY, false, true) : -1);
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_dev != d.dev || st.st_ino != d.ino)
    throw Error(kind, "'" + d.path + "' is not the directory that was validated (it was replaced between the check "
                          "and the launch); nothing was created");
  return fd;
}

std::optional<std::string> file(const GitdirFiles& files, const char* name) {
  auto it = files.find(name);
  return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::set<std::string> gitlinks_of(const GitdirFiles& files, std::size_t hash_len) {
  std::set<std::string> out;
  if (auto index = file(files, "index"))
    for (auto& g : parse_git_index(*index, hash_len).gitlinks) out.insert(g);
  return out;
}

// Directory order is the filesystem's: the record is sorted by path, the same on every seat.
void sort_for_the_record(GitReport& r) {
  auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
  std::stable_sort(r.removed.begin(), r.removed.end(), by_path);
  std::stable_sort(r.stripped.begin(), r.stripped.end(), by_path);
  std::stable_sort(r.findings.begin(), r.findings.end(),
                   [](const GitFinding& a, const GitFinding& b) { return std::tie(a.path, a.kind) < std::tie(b.path, b.kind); });
}

void say(const LaunchPlan& plan, const GitReport& r, std::vector<std::string>& warnings) {
  std::string safe = safe_git_command(plan.git.workspace.path, plan.git.mirror);
  for (const auto& f : r.findings) warnings.push_back(finding_warning(f, safe));
  auto indexes = std::count_if(r.removed.begin(), r.removed.end(), [](const GitRemoval& g) { return g.kind == "index"; });
  if (r.removed.size() > static_cast<std::size_t>(indexes))
    warnings.push_back("git: removed " + std::to_string(r.removed.size() - indexes) +
                       " symlink(s), FIFO(s), socket(s) or device(s) the agent left in the writable git dirs, where git "
                       "never makes them, or FIFO(s), socket(s) or device(s) in the workspace (the record's git.removed "
                       "names each)");
  for (const auto& g : r.removed)
    if (g.kind == "index")
      warnings.push_back("git: removed '" + g.path + "': an entry's path is one git refuses (outside the work tree); "
                         "rebuild it with 'git reset'");
  if (!r.stripped.empty())
    warnings.push_back("git: cleared setuid/setgid or world-write on " + std::to_string(r.stripped.size()) +
                       " entr(ies) the agent left (the record's git.setid_stripped names each)");
  for (const auto& n : r.not_copied_back) warnings.push_back("git: " + n);
  for (const auto& s : r.stopped) warnings.push_back("git: the history scan after the session is incomplete: " + s);
  for (const auto& q : r.quarantined)
    warnings.push_back("git: '" + q.path + "' was not examined (" + q.why + "): set aside in '" + q.to +
                       "', where no git looks and only " + (::geteuid() == 0 ? "root" : "its owner") +
                       " can reach it; review it there, or remove it");
  for (const auto& u : r.unswept) warnings.push_back("git: not swept: " + u);
}

}  // namespace

// A second session on the same workspace while this one runs is refused (docs/DECISIONS.md): its
// sweep and this one's would race over what each agent leaves. The lock is the kernel's (flock on
// the directory itself), so it goes with the launcher, however it ends.
void GitGuard::lock_workspace(const std::string& path) {
  workspace_lock_ = UniqueFd(::openat(workspace_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (workspace_lock_ && ::flock(workspace_lock_.get(), LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK)
    throw Error(ErrorKind::workspace_rejected, "workspace '" + printable(path) +
                                                   "' is in use by another session on this seat (one session per "
                                                   "workspace at a time); nothing was created");
  throw Error(ErrorKind::workspace_rejected, "cannot lock workspace '" + printable(path) + "': " + std::strerror(errno));
}

// The walk sees what is beneath the workspace; the directory itself (the agent may own it) gets
// back what it had of setgid and world-write when it was pinned, no more.
void GitGuard::restore_workspace_mode(const std::string& path, GitReport& r) {
  struct stat now{};
  if (::fstat(workspace_.get(), &now) != 0) return;
  mode_t added = now.st_mode & 02002 & ~workspace_before_.st_mode;
  if (!added) return;
  std::string why = clear_mode_bits(workspace_.get(), now, added);
  mode_t mode = now.st_mode & 07777;
  if (why.empty()) r.strip({path, static_cast<unsigned>(mode), static_cast<unsigned>(mode & ~added)});
  else r.find({path, "setid_left", {}, "setgid/world-write could not be cleared: " + why});
}

void GitGuard::pin(const LaunchPlan& plan) {
  if (plan.git.shape.empty()) return;  // no workspace
  workspace_ = open_pinned(plan.git.workspace, ErrorKind::workspace_rejected);
  ::fstat(workspace_.get(), &workspace_before_);
  lock_workspace(plan.git.workspace.path);
  if (plan.git.shape == "none") return;
  gitdir_ = open_pinned(plan.git.gitdir, ErrorKind::git_unmountable);
  common_ = open_pinned(plan.git.common, ErrorKind::git_unmountable);
  for (const auto& d : plan.git.writable) writable_.push_back(open_pinned(d, ErrorKind::git_unmountable));
}

// A linked worktree's own HEAD and index (in its gitdir, bound read-write); none for a plain clone,
// whose HEAD and index are in the tmpfs.
GitdirFiles GitGuard::worktree_files(const LaunchPlan& plan) const {
  GitdirFiles files;
  if (plan.git.shape != "linked_worktree") return files;
  for (const char* name : {"HEAD", "index"})
    if (auto data = read_file_beneath(gitdir_.get(), name, kGitCopyMaxBytes)) files[name] = std::move(*data);
  return files;
}

void GitGuard::stage(const ContainerRoot& root, const LaunchPlan& plan) {
  if (!gitdir_) return;
  GitdirFiles before = tmpfs_.stage(root, plan, common_.get());
  before.merge(worktree_files(plan));
  // Only what the comparison after the agent needs is kept (an index can be 64 MiB).
  refs_before_ = read_refs(writable_[1].get(), file(before, "packed-refs"), file(before, "HEAD"), plan.git.hash_len);
  gitlinks_before_ = gitlinks_of(before, plan.git.hash_len);
  staged_ = true;
}

void GitGuard::scan_git(const LaunchPlan& plan, const GitdirFiles& left, WalkBudget& budget, GitReport& r) {
  std::size_t hash = plan.git.hash_len;
  HistoryScan scan{writable_[0].get(), hash, plan.git.workspace.path, gitlinks_before_, 0};
  for (const auto& g : gitlinks_of(left, hash))
    if (!scan.known_gitlinks.count(g)) {
      r.find({plan.git.workspace.path + "/" + g, "gitlink", {}, "to the index"});
      scan.known_gitlinks.insert(g);  // said once
    }
  RefState after = read_refs(writable_[1].get(), file(left, "packed-refs"), file(left, "HEAD"), hash);
  scan.session_start_unix = session_start_;
  scan_history(scan, refs_before_, after, budget, r);
}

void GitGuard::conclude(const LaunchPlan& plan, SessionResult& result) {
  if (!workspace_) return;
  std::int64_t t0 = steady_ms();
  session_start_ = result.started_unix;
  GitReport r;
  r.ran = true;
  r.shape = plan.git.shape;
  const GitSweepLimits& sweep = plan.git.sweep;
  WalkLimits limits{sweep.max_depth, sweep.max_entries, t0 + sweep.ms, t0 + 2 * sweep.ms};
  Quarantine git_q(common_ ? common_.get() : -1, plan.git.common.path), ws_q(workspace_.get(), plan.git.workspace.path);
  WalkBudget history;
  try {
    for (std::size_t i = 0; i < writable_.size(); ++i)
      r.entries += sweep_git_dir(writable_[i].get(), plan.git.writable[i].path, limits, git_q, r);
    GitdirFiles left = tmpfs_.left(plan);
    if (gitdir_) left.merge(worktree_files(plan));
    if (staged_) tmpfs_.copy_back(plan, common_.get(), left, r, disk_room(result.disk));
    if (gitdir_) drop_bad_index(gitdir_.get(), plan.git.gitdir.path, plan.git.hash_len, r);
    r.entries += scan_workspace(workspace_.get(), plan.git, plan.git.container_workspace, limits, ws_q, r);
    restore_workspace_mode(plan.git.workspace.path, r);
    if (plan.git.shape == "linked_worktree") find_operation_in_progress(gitdir_.get(), plan.git.gitdir.path, r);
    history.deadline_ms = steady_ms() + kHistoryBudgetMs;
    if (staged_) scan_git(plan, left, history, r);
  } catch (const std::exception& e) {
    r.unswept.push_back(std::string("internal: ") + e.what());
  }
  tmpfs_.close();
  sort_for_the_record(r);
  if (!history.stopped.empty()) r.stopped.insert(r.stopped.begin(), history.stopped);
  r.ms = steady_ms() - t0;
  say(plan, r, result.warnings);
  result.git = std::move(r);
}

}  // namespace asbx
