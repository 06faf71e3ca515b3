// A git index file (`.git/index`) read as data: the agent wrote it. A total function over the
// bytes: the structure is checked (signature, version 2-4, every entry inside the data), the
// gitlinks (mode 160000: an embedded repository committed as a submodule) are listed. The
// trailing checksum is not verified (the host's git does that when it reads the file).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace asbx {

struct GitIndexSummary {
  std::string error;               // "" when the structure is sound
  std::uint32_t version = 0;
  std::uint32_t entries = 0;
  std::vector<std::string> gitlinks;  // paths, in index order (at most max_gitlinks)
  bool split_index = false;        // a "link" extension: the entries live in a sharedindex.* file
  // The first entry whose path git itself would refuse (git_path_problem), "" when none: such an
  // index makes the host's git read, and commit, files outside the work tree.
  std::string bad_path;
};

// Why git's own rules (verify_path in read-cache.c) refuse an index entry's path, or "" for a
// sound one: empty, a leading '/', an empty, '.' or '..' component, a '.git' component in any case
// (also followed by spaces or dots), a backslash.
std::string git_path_problem(std::string_view path);

GitIndexSummary parse_git_index(std::string_view data, std::size_t hash_len = 20, std::size_t max_gitlinks = 1000);

}  // namespace asbx
