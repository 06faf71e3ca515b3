#include "base/git_report.h"

#include <cstdio>

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

}  // namespace

void GitReport::remove(GitRemoval r) { add_named(removed, std::move(r), unnamed); }
void GitReport::strip(GitStrip s) { add_named(stripped, std::move(s), unnamed); }
void GitReport::find(GitFinding f) { add_named(findings, std::move(f), unnamed); }

nlohmann::json git_json(const GitReport& r) {
  if (!r.ran) return nullptr;
  using nlohmann::json;
  json removed = json::array(), stripped = json::array(), findings = json::array();
  for (const auto& x : r.removed) removed.push_back({{"path", x.path}, {"kind", x.kind}});
  for (const auto& x : r.stripped)
    stripped.push_back({{"path", x.path}, {"mode", octal(x.mode_before)}, {"now", octal(x.mode_after)}});
  for (const auto& f : r.findings)
    findings.push_back({{"path", f.path}, {"kind", f.kind}, {"keys", f.keys},
                        {"detail", f.detail.empty() ? json(nullptr) : json(f.detail)}});
  return {{"shape", r.shape},
          {"removed", removed},
          {"setid_stripped", stripped},
          {"findings", findings},
          {"unnamed", r.unnamed},
          {"copied_back", r.copied_back},
          {"not_copied_back", r.not_copied_back},
          {"scan",
           {{"entries", r.entries}, {"commits", r.commits}, {"trees", r.trees}, {"not_loose", r.not_loose},
            {"ms", r.ms}, {"complete", r.stopped.empty()}, {"stopped", r.stopped}}}};
}

}  // namespace asbx
