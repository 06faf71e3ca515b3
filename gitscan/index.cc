#include "gitscan/index.h"

#include "base/util.h"

namespace asbx {
namespace {

constexpr std::uint32_t kGitlinkMode = 0160000;
constexpr std::uint32_t kTypeMask = 0170000;
constexpr std::size_t kStatBytes = 40;  // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each)

std::uint32_t be32(std::string_view d, std::size_t at) {
  auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(d[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

std::uint16_t be16(std::string_view d, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(d[at]) << 8 | static_cast<unsigned char>(d[at + 1]));
}

// Git's varint (varint.c): 7 bits a byte, high bit "more", each continuation adds one first.
bool read_varint(std::string_view d, std::size_t& at, std::uint64_t& out) {
  if (at >= d.size()) return false;
  unsigned char c = static_cast<unsigned char>(d[at++]);
  out = c & 127;
  while (c & 128) {
    if (at >= d.size() || out > (UINT64_MAX >> 8)) return false;
    c = static_cast<unsigned char>(d[at++]);
    out = ((out + 1) << 7) | (c & 127);
  }
  return true;
}

// One entry at `at`; `path` holds the previous entry's path (version 4 strips from it).
bool read_entry(std::string_view d, std::size_t& at, std::uint32_t version, std::size_t hash_len, std::string& path,
                std::uint32_t& mode) {
  std::size_t start = at, fixed = kStatBytes + hash_len + 2;
  if (d.size() - at < fixed) return false;
  mode = be32(d, at + 24);
  std::uint16_t flags = be16(d, at + kStatBytes + hash_len);
  at += fixed;
  if (flags & 0x4000) {  // extended flags: version 3 and up only
    if (version < 3 || d.size() - at < 2) return false;
    at += 2;
  }
  if (version == 4) {
    std::uint64_t strip = 0;
    if (!read_varint(d, at, strip) || strip > path.size()) return false;
    path.resize(path.size() - strip);
  } else {
    path.clear();
  }
  std::size_t nul = d.find('\0', at);
  if (nul == std::string_view::npos) return false;
  path.append(d.substr(at, nul - at));
  at = nul + 1;
  if (version < 4) at = start + ((at - 1 - start + 8) & ~std::size_t{7});  // 1-8 NULs pad to 8 bytes
  return at <= d.size() && !path.empty();
}

// Extensions after the entries: a 4-byte signature and a 4-byte size each, then the checksum.
bool read_extensions(std::string_view d, std::size_t at, std::size_t hash_len, GitIndexSummary& s) {
  while (d.size() - at > hash_len) {
    if (d.size() - at < 8 + hash_len) return false;
    std::string_view sig = d.substr(at, 4);
    std::uint32_t size = be32(d, at + 4);
    if (d.size() - at - 8 - hash_len < size) return false;
    if (sig == "link") s.split_index = true;
    at += 8 + size;
  }
  return d.size() - at == hash_len;
}

bool is_dot_git(std::string_view c) {
  if (c.size() < 4 || c[0] != '.') return false;
  for (std::size_t i = 1; i < 4; ++i)
    if ((c[i] | 0x20) != "git"[i - 1]) return false;
  return c.find_first_not_of(". ", 4) == std::string_view::npos;  // Windows drops trailing dots and spaces
}

}  // namespace

std::string git_path_problem(std::string_view path) {
  if (path.empty()) return "an empty path";
  if (path[0] == '/') return "a leading '/'";
  if (path.find('\\') != std::string_view::npos) return "a backslash";
  std::size_t at = 0;
  while (true) {
    std::size_t slash = path.find('/', at);
    std::string_view c = path.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
    if (c.empty()) return "an empty component";
    if (c == ".") return "a '.' component";
    if (c == "..") return "a '..' component";
    if (is_dot_git(c)) return "a '.git' component";
    if (slash == std::string_view::npos) return "";
    at = slash + 1;
  }
}

GitIndexSummary parse_git_index(std::string_view d, std::size_t hash_len, std::size_t max_gitlinks) {
  GitIndexSummary s;
  if (d.size() < 12 + hash_len || d.substr(0, 4) != "DIRC") {
    s.error = "not an index (no DIRC signature)";
    return s;
  }
  s.version = be32(d, 4);
  s.entries = be32(d, 8);
  if (s.version < 2 || s.version > 4) {
    s.error = "index version " + std::to_string(s.version) + " (git writes 2 to 4)";
    return s;
  }
  std::size_t at = 12;
  std::string path;
  for (std::uint32_t i = 0; i < s.entries; ++i) {
    std::uint32_t mode = 0;
    if (!read_entry(d, at, s.version, hash_len, path, mode)) {
      s.error = "entry " + std::to_string(i) + " of " + std::to_string(s.entries) + " is cut or malformed";
      return s;
    }
    if (std::string why = git_path_problem(path); !why.empty() && s.bad_path.empty())
      s.bad_path = "entry " + std::to_string(i) + " '" + printable(path, 200) + "': " + why;
    if ((mode & kTypeMask) == kGitlinkMode && s.gitlinks.size() < max_gitlinks) s.gitlinks.push_back(path);
  }
  if (!read_extensions(d, at, hash_len, s)) s.error = "the extensions or the checksum are cut or malformed";
  return s;
}

}  // namespace asbx
