// What the launcher did and found in the workspace's git after the agent ended, as the status
// record and the ledger say it (the record's `git` object; docs/MOUNTS.md, "After the agent").
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace asbx {

// Something a host git would obey that the agent made: an embedded repository, a gitlink, a
// `.git` file, a dangerous key. Keys by name only: their values are the agent's words.
struct GitFinding {
  std::string path;                // on the seat
  std::string kind;                // embedded_repository, gitdir_link, bare_repository, gitlink, ...
  std::vector<std::string> keys;   // config keys that run a program or redirect git
  std::string detail;              // where a link points, which commit holds a gitlink
  bool operator==(const GitFinding&) const = default;
};

struct GitRemoval {
  std::string path;  // on the seat
  std::string kind;  // symlink, fifo, socket, device; index (an entry path git refuses)
  bool operator==(const GitRemoval&) const = default;
};

struct GitStrip {
  std::string path;
  unsigned mode_before = 0;  // permission bits (07777)
  unsigned mode_after = 0;
  bool operator==(const GitStrip&) const = default;
};

// A directory a limit of the sweep kept out, moved into a quarantine (launcher/gitguard/quarantine.h).
struct GitQuarantined {
  std::string path;  // where it was
  std::string to;    // where it is now
  std::string why;   // the limit: "deeper than 128 levels", "past N entries in this walk", the time
  bool operator==(const GitQuarantined&) const = default;
};

// The record names at most this many of each list; the rest are counted.
inline constexpr std::size_t kMaxNamedGitEntries = 200;

struct GitReport {
  bool ran = false;               // false: no workspace, or the agent never started ("git": null)
  std::string shape;              // "none", "plain", "linked_worktree"
  std::vector<GitRemoval> removed;
  std::vector<GitStrip> stripped;
  std::vector<GitFinding> findings;
  std::int64_t unnamed = 0;       // entries of the three lists past kMaxNamedGitEntries
  std::vector<std::string> copied_back;        // plain: which files went back to the host gitdir
  std::vector<std::string> not_copied_back;    // "FILE: why"
  std::int64_t entries = 0;       // directory entries the walks looked at
  std::int64_t commits = 0;       // commits made during the session that were read
  std::int64_t trees = 0;
  std::int64_t not_loose = 0;     // objects of those commits not stored loose (packed): not read
  std::int64_t ms = 0;
  std::vector<std::string> stopped;  // why the history scan stopped early, what it did not read
  std::vector<GitQuarantined> quarantined;  // set aside, not live (at most kMaxNamedGitEntries, then failed closed)
  std::vector<std::string> unswept;  // neither swept nor set aside: the session fails with sweep_incomplete

  void remove(GitRemoval r);
  void strip(GitStrip s);
  void find(GitFinding f);
};

nlohmann::json git_json(const GitReport& report);

}  // namespace asbx
