#include "gitscan/safe_git.h"

#include <algorithm>
#include <set>

namespace asbx {
namespace {

// Each row checked against a real planted trap (tests/integration/test_host_git.py).
const GitOverride kFixed[] = {
    {"core.fsmonitor", "false"},          // no fsmonitor hook on status, diff, add, commit
    {"core.hooksPath", "/dev/null"},      // no hook: git looks for /dev/null/NAME
    {"core.sshCommand", "ssh"},           // the caller's GIT_SSH_COMMAND / GIT_SSH still win (env)
    {"core.askPass", ""},                 // the caller's GIT_ASKPASS still wins (env)
    {"core.editor", "true"},              // GIT_EDITOR=true too
    {"sequence.editor", "true"},
    {"core.pager", "cat"},                // --no-pager and GIT_PAGER=cat too
    {"credential.helper", ""},            // resets the list: no helper from any file
    {"diff.ignoreSubmodules", "dirty"},   // status and diff never look inside an embedded repository (its
                                          // commit changes still show, for review)
    {"status.submoduleSummary", "false"},
    {"submodule.recurse", "false"},
    {"fetch.recurseSubmodules", "false"},
    {"push.recurseSubmodules", "no"},
    {"protocol.ext.allow", "never"},      // ext:: runs a command
    {"protocol.file.allow", "never"},     // file:// and local paths run upload-pack on the agent's repo
    {"commit.gpgSign", "false"},
    {"tag.gpgSign", "false"},
    {"log.showSignature", "false"},
    {"gpg.program", "gpg"},               // the defaults, not the repository's programs
    {"gpg.ssh.program", "ssh-keygen"},
    {"gpg.x509.program", "gpgsm"},
    {"gc.auto", "0"},                     // no maintenance run on the host after a commit
    {"maintenance.auto", "false"},
};

// Per named subsection: which keys are emptied (or set) for every name the repository defines.
struct NamedRow {
  const char* section;
  const char* name;
  const char* value;
};
const NamedRow kNamed[] = {
    {"filter", "clean", ""},      {"filter", "smudge", ""},   {"filter", "process", ""},
    {"filter", "required", "false"},                          // content passes through unfiltered
    {"diff", "command", ""},      {"diff", "textconv", ""},   // "cannot run": the diff fails closed
    {"merge", "driver", ""},                                   // the merge fails closed
    {"remote", "uploadpack", "git-upload-pack"}, {"remote", "receivepack", "git-receive-pack"},
    {"difftool", "cmd", "false"}, {"mergetool", "cmd", "false"}, {"submodule", "update", "none"},
};
// Single keys reset only when the repository sets them (their defaults are not a value).
const GitOverride kIfPresent[] = {
    {"diff.external", ""}, {"core.alternaterefscommand", "true"}, {"interactive.difffilter", "cat"},
};

}  // namespace

std::vector<GitOverride> safe_git_overrides(const std::vector<GitConfigEntry>& repo) {
  std::vector<GitOverride> out(std::begin(kFixed), std::end(kFixed));
  std::set<std::pair<std::string, std::string>> named;  // (section, subsection) seen
  for (const auto& e : repo) {
    GitKeyParts k = split_git_key(e.key);
    if (!k.subsection.empty()) named.insert({k.section, k.subsection});
  }
  for (const auto& [section, sub] : named)
    for (const auto& row : kNamed)
      if (section == row.section) out.push_back({section + "." + sub + "." + row.name, row.value});
  for (const auto& row : kIfPresent)
    if (std::any_of(repo.begin(), repo.end(), [&](const GitConfigEntry& e) { return e.key == row.key; }))
      out.push_back(row);
  return out;
}

SafeGitRun safe_git_run(const std::string& git, const std::string& work_tree, const std::string& gitdir,
                        const std::string& common_dir, const std::vector<GitConfigEntry>& repo,
                        const std::map<std::string, std::string>& environ, const std::vector<std::string>& args) {
  SafeGitRun run;
  run.argv = {git, "--no-pager"};
  run.argv.insert(run.argv.end(), args.begin(), args.end());
  auto set = [&](const std::string& name, const std::string& value) { run.env.emplace_back(name, value); };
  set("GIT_DIR", gitdir);
  set("GIT_WORK_TREE", work_tree);
  if (common_dir.empty()) run.env.emplace_back("GIT_COMMON_DIR", std::nullopt);
  else set("GIT_COMMON_DIR", common_dir);
  for (const char* name : {"GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"})
    run.env.emplace_back(name, std::nullopt);  // pinned to the validated repository, nothing beside it
  for (const char* name : {"GIT_PAGER", "PAGER"}) set(name, "cat");
  for (const char* name : {"GIT_EDITOR", "GIT_SEQUENCE_EDITOR"}) set(name, "true");
  set("GIT_NO_REPLACE_OBJECTS", "1");  // refs/replace/ is the agent's: show the real objects
  if (!environ.count("GIT_PROXY_COMMAND")) set("GIT_PROXY_COMMAND", "");  // set: core.gitProxy is not read
  std::size_t first = 0;
  if (auto it = environ.find("GIT_CONFIG_COUNT"); it != environ.end()) {
    const std::string& n = it->second;
    if (!n.empty() && n.size() < 5 && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
      first = std::stoul(n);
  }
  std::vector<GitOverride> rows = safe_git_overrides(repo);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    set("GIT_CONFIG_KEY_" + std::to_string(first + i), rows[i].key);
    set("GIT_CONFIG_VALUE_" + std::to_string(first + i), rows[i].value);
  }
  set("GIT_CONFIG_COUNT", std::to_string(first + rows.size()));
  return run;
}

}  // namespace asbx
