// Loose git objects (objects/xx/yyyy…: zlib-deflated "TYPE SIZE\0BODY") read as data, to find
// gitlinks in the commits an agent made: commits, trees and tags only, each bounded. Packed
// objects are not read (the caller counts them as not scanned; docs/MOUNTS.md).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asbx {

struct GitObject {
  std::string type;  // commit, tree, blob, tag
  std::string body;
};

// Inflates `deflated` (a zlib stream) and checks the header; nullopt when it is not a
// well-formed object or inflates to more than `max_bytes`.
std::optional<GitObject> read_loose_object(std::string_view deflated, std::size_t max_bytes);

struct GitCommitLinks {
  std::string tree;                  // hex
  std::vector<std::string> parents;  // hex
};
std::optional<GitCommitLinks> parse_commit(std::string_view body, std::size_t hash_len);

struct GitTreeEntry {
  std::string mode;  // as written: "100644", "40000", "160000", ...
  std::string name;
  std::string id;    // hex
};
std::optional<std::vector<GitTreeEntry>> parse_tree(std::string_view body, std::size_t hash_len,
                                                    std::size_t max_entries = 1'000'000);
// A tag's "object HEX" line; nullopt when absent or malformed.
std::optional<std::string> parse_tag_target(std::string_view body, std::size_t hash_len);

bool is_hex_id(std::string_view s, std::size_t hash_len);
std::string to_hex(std::string_view raw);

}  // namespace asbx
