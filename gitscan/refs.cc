#include "gitscan/refs.h"

#include "gitscan/objects.h"

namespace asbx {
namespace {

bool forbidden_char(unsigned char c) {
  return c < 0x20 || c == 0x7f || c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' || c == '*' ||
         c == '[' || c == '\\';
}

bool safe_component(std::string_view part) {
  constexpr std::string_view lock = ".lock";
  if (part.empty() || part[0] == '.') return false;
  return part.size() < lock.size() || part.substr(part.size() - lock.size()) != lock;
}

}  // namespace

bool is_safe_refname(std::string_view name) {
  if (name.empty() || name == "@" || name.back() == '.' || name.find("..") != std::string_view::npos ||
      name.find("@{") != std::string_view::npos)
    return false;
  for (unsigned char c : name)
    if (forbidden_char(c)) return false;
  std::size_t at = 0;
  for (;;) {
    std::size_t slash = name.find('/', at);
    if (!safe_component(name.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at)))
      return false;
    if (slash == std::string_view::npos) return true;
    at = slash + 1;
  }
}

std::string check_head(std::string_view content, std::size_t hash_len) {
  if (content.empty() || content.back() != '\n') return "it does not end with a newline";
  std::string_view line = content.substr(0, content.size() - 1);
  if (line.find('\n') != std::string_view::npos) return "it has more than one line";
  constexpr std::string_view prefix = "ref: refs/heads/";
  if (line.rfind(prefix, 0) == 0)
    return is_safe_refname(line.substr(5)) ? "" : "it names a branch git would refuse";
  if (is_hex_id(line, hash_len)) return "";
  return "it is neither 'ref: refs/heads/NAME' nor an object id";
}

std::optional<std::string> loose_ref_id(std::string_view content, std::size_t hash_len) {
  while (!content.empty() && (content.back() == '\n' || content.back() == ' ' || content.back() == '\t'))
    content.remove_suffix(1);
  if (!is_hex_id(content, hash_len)) return std::nullopt;
  return std::string(content);
}

std::optional<std::map<std::string, std::string>> parse_packed_refs(std::string_view text, std::size_t hash_len,
                                                                    std::string& why) {
  std::map<std::string, std::string> refs;
  std::size_t at = 0, hex = 2 * hash_len;
  for (int line_no = 1; at < text.size(); ++line_no) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) {
      why = "line " + std::to_string(line_no) + ": no newline at the end";
      return std::nullopt;
    }
    std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    if (line_no == 1 && line.rfind("# pack-refs with:", 0) == 0) continue;
    bool peeled = !line.empty() && line[0] == '^' && is_hex_id(line.substr(1), hash_len) && !refs.empty();
    bool ref = line.size() > hex + 1 && is_hex_id(line.substr(0, hex), hash_len) && line[hex] == ' ' &&
               line.substr(hex + 1).rfind("refs/", 0) == 0 && is_safe_refname(line.substr(hex + 1));
    if (!peeled && !ref) {
      why = "line " + std::to_string(line_no) + ": neither 'ID refs/NAME' nor '^ID'";
      return std::nullopt;
    }
    if (ref) refs[std::string(line.substr(hex + 1))] = std::string(line.substr(0, hex));
  }
  return refs;
}

}  // namespace asbx
