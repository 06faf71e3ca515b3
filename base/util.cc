#include "base/util.h"

#include <cctype>

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>

#include "base/dir_walk.h"
#include "base/seat_config.h"

namespace asbx {
namespace {

bool is_ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

}  // namespace

bool is_plain_name(const std::string& s, std::size_t max_len) {
  bool ok = !s.empty() && s.size() <= max_len && is_ascii_alnum(s[0]);
  for (char c : s) ok = ok && (is_ascii_alnum(c) || c == '-' || c == '_' || c == '.');
  return ok;
}

bool make_dirs(const std::string& dir, std::string* why) {
  if (dir.empty()) return true;
  std::string reason;
  UniqueFd fd = open_dir_path(dir, true, reason);
  if (!fd && why) *why = reason;
  return static_cast<bool>(fd);
}

std::string config_base(const UserFacts& user) {
  return !user.xdg_config_home.empty() ? user.xdg_config_home : user.home + "/.config";
}

std::map<std::string, std::string> environ_map(char* const* entries) {
  std::map<std::string, std::string> env;
  for (char* const* e = entries; e && *e; ++e) {
    std::string kv = *e;
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

namespace {

// Code points a terminal acts on or that reorder what is shown: C1 controls, the bidirectional
// marks, embeddings, overrides and isolates, the line and paragraph separators, the BOM.
bool invisible(unsigned cp) {
  return cp < 0xa0 || cp == 0xad || cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

// The length of the well-formed multi-byte UTF-8 sequence at s[i] (its code point in cp); 0 otherwise.
std::size_t utf8_sequence(const std::string& s, std::size_t i, unsigned& cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  cp = c & (0x7f >> n);
  for (std::size_t k = 1; k < n; ++k) {
    unsigned char t = static_cast<unsigned char>(s[i + k]);
    if ((t & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (t & 0x3f);
  }
  const unsigned least[] = {0, 0, 0x80, 0x800, 0x10000};
  return cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

// The length of the well-formed UTF-8 sequence at s[i] when it encodes a visible code point; 0 otherwise.
std::size_t visible_utf8(const std::string& s, std::size_t i) {
  unsigned cp = 0;
  std::size_t n = utf8_sequence(s, i, cp);
  return n == 0 || invisible(cp) ? 0 : n;
}

}  // namespace

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    unsigned cp = 0;
    std::size_t n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : utf8_sequence(s, i, cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string printable(const std::string& s, std::size_t max_len) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size() && out.size() <= max_len) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = c >= 0x20 && c < 0x7f ? 1 : visible_utf8(s, i);
    if (out.size() + std::max<std::size_t>(n, 1) > max_len) break;
    out += n ? s.substr(i, n) : std::string("?");
    i += n ? n : 1;
  }
  return i < s.size() ? out + "..." : out;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

}  // namespace asbx

#include <stdexcept>
#include <sys/random.h>

namespace asbx {
std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t got = 0; got < n;) {
    ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r > 0) got += static_cast<std::size_t>(r);
    else if (errno != EINTR) throw std::runtime_error("getrandom failed");
  }
  return out;
}
std::string random_hex(std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : random_bytes(n)) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}
std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

}  // namespace asbx
