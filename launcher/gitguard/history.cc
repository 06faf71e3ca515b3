#include "launcher/gitguard/history.h"

#include <deque>
#include <fcntl.h>
#include <sys/stat.h>
#include <vector>

#include "base/beneath.h"
#include "gitscan/objects.h"
#include "gitscan/refs.h"

namespace asbx {
namespace {

constexpr std::int64_t kMaxObjectBytes = 16 << 20;
constexpr std::int64_t kMaxCommits = 10'000;
constexpr std::int64_t kMaxTrees = 200'000;
constexpr std::int64_t kMaxRefs = 100'000;

class History {
 public:
  History(const HistoryScan& s, WalkBudget& b, GitReport& r) : s_(s), budget_(b), report_(r) {}

  void commits(std::deque<std::string> todo, const std::set<std::string>& stop) {
    std::set<std::string> seen;
    while (!todo.empty() && !budget_.spent("the commits of the session")) {
      std::string id = todo.front();
      todo.pop_front();
      if (stop.count(id) || !seen.insert(id).second) continue;
      if (report_.commits >= kMaxCommits) return stop_here("more than " + std::to_string(kMaxCommits) + " new commits");
      auto obj = load(id);
      if (!obj) continue;
      if (obj->type == "tag") {
        if (auto target = parse_tag_target(obj->body, s_.hash_len)) todo.push_back(*target);
      } else if (obj->type == "commit") {
        auto links = parse_commit(obj->body, s_.hash_len);
        if (!links) continue;
        ++report_.commits;
        trees(links->tree, id);
        for (const auto& p : links->parents) todo.push_back(p);
      }
    }
  }

 private:
  // A loose object written during the session (its file is not older than the session); one
  // that was there before is the repository's own and is not read again.
  std::optional<GitObject> load(const std::string& id) {
    std::string rel = id.substr(0, 2) + "/" + id.substr(2);
    UniqueFd file(open_beneath(s_.objects_fd, rel, O_PATH));
    struct stat st{};
    if (file && ::fstat(file.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime < s_.session_start_unix)
      return std::nullopt;
    auto data = read_file_beneath(s_.objects_fd, rel, kMaxObjectBytes);
    auto obj = data ? read_loose_object(*data, kMaxObjectBytes) : std::nullopt;
    if (!obj) ++report_.not_loose;
    return obj;
  }

  // Every tree of one commit, without recursion (an agent can nest trees arbitrarily deep).
  void trees(const std::string& root, const std::string& commit) {
    std::vector<std::pair<std::string, std::string>> stack{{root, ""}};
    while (!stack.empty()) {
      auto [id, prefix] = stack.back();
      stack.pop_back();
      if (!seen_trees_.insert(id).second) continue;
      if (report_.trees >= kMaxTrees) return stop_here("more than " + std::to_string(kMaxTrees) + " trees");
      auto obj = load(id);
      auto entries = obj && obj->type == "tree" ? parse_tree(obj->body, s_.hash_len) : std::nullopt;
      if (!entries) continue;
      ++report_.trees;
      for (const auto& e : *entries) {
        if (e.mode == "40000") stack.emplace_back(e.id, prefix + e.name + "/");
        else if (e.mode == "160000") gitlink(prefix + e.name, commit);
      }
    }
  }

  void gitlink(const std::string& path, const std::string& commit) {
    if (s_.known_gitlinks.count(path) || !reported_.insert(path).second) return;
    report_.find({s_.workspace + "/" + path, "gitlink", {}, "in commit " + commit.substr(0, 12)});
  }

  void stop_here(const std::string& why) {
    if (budget_.stopped.empty()) budget_.stopped = "history: " + why;
  }

  const HistoryScan& s_;
  WalkBudget& budget_;
  GitReport& report_;
  std::set<std::string> seen_trees_, reported_;
};

// Packs whose file was written during the session: their objects are not read.
void count_new_packs(const HistoryScan& s, GitReport& report) {
  UniqueFd pack(open_beneath(s.objects_fd, "pack", O_RDONLY | O_DIRECTORY | O_NONBLOCK));
  if (!pack) return;
  WalkBudget small;
  small.max_entries = 10'000;
  int fresh = 0;
  walk_beneath(pack.get(), "pack", small, [&](const WalkEntry& e) {
    std::string n = e.name;
    if (S_ISREG(e.st.st_mode) && n.size() > 5 && n.compare(n.size() - 5, 5, ".pack") == 0 &&
        e.st.st_mtime >= s.session_start_unix)
      ++fresh;
    return false;
  });
  if (fresh > 0)
    report.stopped.push_back(std::to_string(fresh) + " pack(s) written during the session were not read (objects in "
                             "packs are not scanned)");
}

}  // namespace

RefState read_refs(int refs_fd, const std::optional<std::string>& packed_refs, const std::optional<std::string>& head,
                   std::size_t hash_len) {
  RefState state;
  std::string why;
  if (packed_refs)
    if (auto packed = parse_packed_refs(*packed_refs, hash_len, why)) state.refs = *packed;
  WalkBudget budget;
  budget.max_entries = kMaxRefs;
  walk_beneath(refs_fd, "refs", budget, [&](const WalkEntry& e) {
    if (S_ISREG(e.st.st_mode))
      if (auto text = read_file_beneath(e.dirfd, e.name, 256))
        if (auto id = loose_ref_id(*text, hash_len)) state.refs[e.path] = *id;
    return S_ISDIR(e.st.st_mode);
  });
  if (head)
    if (auto id = loose_ref_id(*head, hash_len)) state.refs["HEAD"] = *id;
  return state;
}

void scan_history(const HistoryScan& s, const RefState& before, const RefState& after, WalkBudget& budget,
                  GitReport& report) {
  std::set<std::string> stop;
  for (const auto& [name, id] : before.refs) stop.insert(id);
  std::deque<std::string> todo;
  for (const auto& [name, id] : after.refs)
    if (!stop.count(id)) todo.push_back(id);
  History(s, budget, report).commits(todo, stop);
  count_new_packs(s, report);
}

}  // namespace asbx
