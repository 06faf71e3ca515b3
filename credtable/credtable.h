// The credential table: one row per runtime, read from a TOML file installed with the
// program. A row names where a credential lives on the seat and where its writable copy
// goes inside the ephemeral HOME. What travels is a path, never a token.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "credtable/lifetime.h"
#include "plan/config.h"

namespace asbx {

struct CredRow {
  std::string name;            // --runtime NAME
  std::string source;          // path template of the default identity
  std::string account_source;  // path template with {account}, for --account NAME
  std::string destination;     // relative to the ephemeral HOME
  std::vector<std::string> env;
  bool required = true;
  std::string command;                          // the CLI's argv[0] basename (default: name)
  std::vector<std::string> inner_sandbox_off;   // argv forms that turn the CLI's own sandbox off
  std::string inner_sandbox_why;                // why it must be off, for the usage error
  std::vector<std::string> egress;              // endpoints the CLI needs (--egress default)
  LifetimeRule lifetime;                        // where the expiry lives, the CLI's refresh rule
  std::vector<std::string> state;               // paths under HOME worth keeping (docs/STATE.md)
  // Files written into the fresh HOME before the agent starts: HOME-relative path → constant
  // text from this table (never a secret, never the caller's), e.g. the CLI's "onboarding done".
  std::vector<std::pair<std::string, std::string>> home_seed;
  // Inject mode (docs/CREDENTIALS.md): the secrets' JSON paths in the file, the API hosts whose
  // TLS the wall terminates, the token endpoints it answers, and the path rules per host
  // ("HOST/path" entries: "/exact" or "/prefix/"). A row without inject_hosts stays in copy mode.
  std::vector<std::string> secrets;
  std::vector<std::string> inject_hosts;
  std::vector<std::string> refresh_hosts;
  std::string token_path;                 // on each refresh host, the endpoint answered (POST)
  std::string token_answer;               // "openai" | "anthropic": the answer's shape
  std::vector<std::string> inject_allow;  // "HOST/path..."
  std::vector<std::string> inject_deny;   // "HOST/path-prefix"
  bool can_inject() const { return !inject_hosts.empty() && !secrets.empty(); }
  bool operator==(const CredRow&) const = default;
};

// The row's inject and refresh hosts as the wall enforces them (egress/inject.h).
std::vector<InjectHost> inject_hosts_of(const CredRow& row);

struct CredTable {
  std::string path;  // file it came from
  std::vector<CredRow> rows;
};

// Throws Error(config, "file:line: ...") on any malformed row or unknown key.
CredTable parse_credtable(const std::string& text, const std::string& path);
// Lookup order: the seat config's `credtable` (when set), then the installed table
// (ASBX_CREDTABLE_INSTALLED), then the source tree's credtable/credtable.toml. No
// environment variable takes part.
std::string credtable_path(const SeatConfig& seat);
// The same order with the installed and source-tree paths given (tests).
std::string credtable_path(const SeatConfig& seat, const std::string& installed, const std::string& source_tree);
CredTable load_credtable(const std::string& path);
// Throws Error(usage) naming the known rows.
const CredRow& find_row(const CredTable& table, const std::string& name);
// ~ → home, {config} → XDG_CONFIG_HOME or ~/.config, {account} → account.
std::string expand_template(const std::string& tmpl, const UserFacts& user, const std::string& account);

}  // namespace asbx
