// The commits a session made, found by comparing the refs before and after it, read from loose
// objects only (what commit, merge, rebase, stash and a small local fetch write): each commit's
// trees are searched for gitlinks (mode 160000) the repository did not have. An object that is
// not loose (packed, e.g. by the agent's own `git gc`) is counted, not read; so is a pack
// written during the session. Bounded in commits, trees and time.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/git_report.h"
#include "launcher/gitguard/walk.h"

namespace asbx {

struct RefState {
  std::map<std::string, std::string> refs;  // "refs/heads/main" → id; "HEAD" when detached
};

// Loose refs under `refs_fd` (the refs/ dir), then packed-refs and HEAD (bytes; nullopt = none).
RefState read_refs(int refs_fd, const std::optional<std::string>& packed_refs, const std::optional<std::string>& head,
                   std::size_t hash_len);

struct HistoryScan {
  int objects_fd;
  std::size_t hash_len;
  std::string workspace;               // gitlink paths are said under it
  std::set<std::string> known_gitlinks;  // paths the repository had before the session
  std::int64_t session_start_unix;
};
void scan_history(const HistoryScan& scan, const RefState& before, const RefState& after, WalkBudget& budget,
                  GitReport& report);

}  // namespace asbx
