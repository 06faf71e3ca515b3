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
};

GitIndexSummary parse_git_index(std::string_view data, std::size_t hash_len = 20, std::size_t max_gitlinks = 1000);

}  // namespace asbx
