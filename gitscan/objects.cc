#include "gitscan/objects.h"

#include <zlib.h>

namespace asbx {
namespace {

std::optional<std::string> inflate_bounded(std::string_view in, std::size_t max_bytes) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return std::nullopt;
  std::string out;
  char buf[16384];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > max_bytes || (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0)) rc = Z_DATA_ERROR;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

// Header lines of a commit or tag body, up to the blank line before the message.
template <class F>
void each_header(std::string_view body, F&& f) {
  std::size_t at = 0;
  while (at < body.size()) {
    std::size_t nl = body.find('\n', at);
    if (nl == std::string_view::npos || nl == at) return;
    if (!f(body.substr(at, nl - at))) return;
    at = nl + 1;
  }
}

}  // namespace

bool is_hex_id(std::string_view s, std::size_t hash_len) {
  if (s.size() != 2 * hash_len) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string to_hex(std::string_view raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::optional<GitObject> read_loose_object(std::string_view deflated, std::size_t max_bytes) {
  auto data = inflate_bounded(deflated, max_bytes);
  if (!data) return std::nullopt;
  std::size_t space = data->find(' '), nul = data->find('\0');  // the size: 1 to 19 digits
  if (space == std::string::npos || nul == std::string::npos || space > nul || nul - space < 2 || nul - space > 20)
    return std::nullopt;
  GitObject o{data->substr(0, space), data->substr(nul + 1)};
  std::string size = data->substr(space + 1, nul - space - 1);
  for (char c : size)
    if (c < '0' || c > '9') return std::nullopt;
  if (std::stoull(size) != o.body.size()) return std::nullopt;
  if (o.type != "commit" && o.type != "tree" && o.type != "blob" && o.type != "tag") return std::nullopt;
  return o;
}

std::optional<GitCommitLinks> parse_commit(std::string_view body, std::size_t hash_len) {
  GitCommitLinks c;
  bool bad = false;
  each_header(body, [&](std::string_view line) {
    if (line.rfind("tree ", 0) == 0 && c.tree.empty()) c.tree = line.substr(5);
    else if (line.rfind("parent ", 0) == 0) c.parents.emplace_back(line.substr(7));
    else return true;
    bad = bad || !is_hex_id(line.substr(line.find(' ') + 1), hash_len);
    return !bad;
  });
  if (bad || c.tree.empty()) return std::nullopt;
  return c;
}

std::optional<std::vector<GitTreeEntry>> parse_tree(std::string_view body, std::size_t hash_len,
                                                    std::size_t max_entries) {
  std::vector<GitTreeEntry> out;
  std::size_t at = 0;
  while (at < body.size()) {
    std::size_t space = body.find(' ', at), nul = body.find('\0', at);
    if (space == std::string_view::npos || nul == std::string_view::npos || space > nul || space == at ||
        nul == space + 1 || body.size() - nul - 1 < hash_len || out.size() >= max_entries)
      return std::nullopt;
    out.push_back({std::string(body.substr(at, space - at)), std::string(body.substr(space + 1, nul - space - 1)),
                   to_hex(body.substr(nul + 1, hash_len))});
    at = nul + 1 + hash_len;
  }
  return out;
}

std::optional<std::string> parse_tag_target(std::string_view body, std::size_t hash_len) {
  std::optional<std::string> target;
  each_header(body, [&](std::string_view line) {
    if (line.rfind("object ", 0) != 0) return true;
    if (is_hex_id(line.substr(7), hash_len)) target = std::string(line.substr(7));
    return false;
  });
  return target;
}

}  // namespace asbx
