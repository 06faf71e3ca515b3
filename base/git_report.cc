#include "base/git_report.h"

#include <cstdio>

#include "base/util.h"

namespace asbx {
namespace {

template <class T>
void add_named(std::vector<T>& list, T item, std::int64_t& unnamed) {
  if (list.size() < kMaxNamedGitEntries) list.push_back(std::move(item));
  else ++unnamed;
}

std::string octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

std::vector<std::string> shown(const std::vector<std::string>& list) {
  std::vector<std::string> out;
  for (const auto& s : list) out.push_back(printable(s));
  return out;
}

}  // namespace

void GitReport::remove(GitRemoval r) { add_named(removed, std::move(r), unnamed); }
void GitReport::strip(GitStrip s) { add_named(stripped, std::move(s), unnamed); }
void GitReport::find(GitFinding f) { add_named(findings, std::move(f), unnamed); }

nlohmann::json git_json(const GitReport& r) {
  if (!r.ran) return nullptr;
  using nlohmann::json;
  json removed = json::array(), stripped = json::array(), findings = json::array(), quarantined = json::array();
  // Every name here is the agent's: printable() (base/util.h), as on the caller's terminal.
  for (const auto& q : r.quarantined) quarantined.push_back({{"path", printable(q.path)}, {"to", printable(q.to)}, {"why", q.why}});
  for (const auto& x : r.removed) removed.push_back({{"path", printable(x.path)}, {"kind", x.kind}});
  for (const auto& x : r.stripped)
    stripped.push_back({{"path", printable(x.path)}, {"mode", octal(x.mode_before)}, {"now", octal(x.mode_after)}});
  for (const auto& f : r.findings)
    findings.push_back({{"path", printable(f.path)}, {"kind", f.kind}, {"keys", shown(f.keys)},
                        {"detail", f.detail.empty() ? json(nullptr) : json(printable(f.detail))}});
  return {{"shape", r.shape},
          {"removed", removed},
          {"setid_stripped", stripped},
          {"findings", findings},
          {"unnamed", r.unnamed},
          {"quarantined", quarantined},
          {"unswept", shown(r.unswept)},
          {"copied_back", r.copied_back},
          {"not_copied_back", shown(r.not_copied_back)},
          {"scan",
           {{"entries", r.entries}, {"commits", r.commits}, {"trees", r.trees}, {"not_loose", r.not_loose},
            {"ms", r.ms}, {"complete", r.stopped.empty() && r.unswept.empty()}, {"stopped", shown(r.stopped)}}}};
}

}  // namespace asbx
