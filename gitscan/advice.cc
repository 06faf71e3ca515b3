#include "gitscan/advice.h"

#include <algorithm>

#include "base/util.h"

namespace asbx {
namespace {

constexpr std::size_t kKeysSaid = 6;

std::string keys_said(const GitFinding& f) {
  if (f.keys.empty()) return "";
  std::vector<std::string> first(f.keys.begin(), f.keys.begin() + std::min(f.keys.size(), kKeysSaid));
  std::string more = f.keys.size() > kKeysSaid ? " and " + std::to_string(f.keys.size() - kKeysSaid) + " more" : "";
  return " (its config sets " + join(first) + more + ")";
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

std::string safe_git_command(const std::string& workspace, const std::string& mirror) {
  return "agent-sandbox git --workspace " + quoted(workspace) + (mirror.empty() ? "" : " --git-mirror " + quoted(mirror));
}

std::string finding_warning(const GitFinding& f, const std::string& safe) {
  std::string p = quoted(f.path), use = "; run git there only as '" + safe + " -- …'";
  if (f.kind == "embedded_repository")
    return "git: " + p + " is a repository the agent made inside the workspace" + keys_said(f) +
           ": a plain git in the workspace enters it and obeys its config" + use + ", or remove " + quoted(f.path + "/.git") +
           " after reading it";
  if (f.kind == "gitdir_link")
    return "git: " + quoted(f.path + "/.git") + " is a file sending git to " + quoted(f.detail) + keys_said(f) +
           ": a plain git in the workspace follows it" + use + ", or remove that file";
  if (f.kind == "repository_created")
    return "git: the workspace had no repository and the agent made " + quoted(f.path + "/.git") + keys_said(f) +
           ": a plain git in the workspace obeys it" + use + ", or remove it";
  if (f.kind == "bare_repository")
    return "git: " + p + " is a bare repository inside the workspace" + keys_said(f) +
           ": a git run inside it obeys its config; never run git in it (safe.bareRepository=explicit refuses it), or "
           "remove it";
  if (f.kind == "gitlink")
    return "git: " + p + " is a gitlink (an embedded repository, mode 160000) added " + f.detail +
           ": a plain git enters " + p + " whenever a repository is there" + use + " and review it before pushing";
  if (f.kind == "operation_in_progress")
    return "git: the agent left " + f.detail + " in " + p +
           ": its todo list can hold 'exec' lines that a continue runs; abort it with '" + safe + " -- " +
           (f.detail.find("rebase") != std::string::npos ? "rebase" : "cherry-pick") + " --abort'";
  return "git: " + p + ": " + f.kind + (f.detail.empty() ? "" : " (" + f.detail + ")");
}

}  // namespace asbx
