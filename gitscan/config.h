// Git configuration text (a repository's `config`, an included file) read as data, never by
// running git: the agent may have written every byte. A total function: any input gives the
// entries up to the first line git itself would refuse, and that line's number.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace asbx {

struct GitConfigEntry {
  std::string key;    // canonical, as git names it: section and name lowercased, subsection kept
  std::string value;  // "" for a key without "=" (git's boolean true; has_value false)
  bool has_value = false;
  int line = 0;
  bool operator==(const GitConfigEntry&) const = default;
};

struct GitConfigParse {
  std::vector<GitConfigEntry> entries;
  std::string error;  // "" or "line N: why" (git would stop there too)
};

// At most `max_entries` entries are kept (the rest is reported as an error).
GitConfigParse parse_git_config(std::string_view text, std::size_t max_entries = 100'000);

// "filter.evil.clean" → {"filter", "evil", "clean"}; a key without subsection has "" in the middle.
struct GitKeyParts {
  std::string section, subsection, name;
};
GitKeyParts split_git_key(const std::string& key);

// Whether git obeys this entry by running a program, or by reading config, hooks or a work tree
// from somewhere else: fsmonitor, hooksPath, filters, diff/merge drivers, sshCommand, editor,
// pager, askPass, credential helpers, include/includeIf, ... (the list: gitscan/config.cc).
bool runs_or_redirects(const GitConfigEntry& entry);
// The canonical names of such entries, each once, in the order they first appear.
std::vector<std::string> dangerous_keys(const std::vector<GitConfigEntry>& entries);
// The values of include.path and includeIf.*.path (files git would read next).
std::vector<std::string> include_paths(const std::vector<GitConfigEntry>& entries);
// extensions.objectFormat = sha256 → 32, else 20.
std::size_t object_id_bytes(const std::vector<GitConfigEntry>& entries);

}  // namespace asbx
