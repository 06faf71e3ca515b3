#include "launcher/kube/yaml.h"

#include <cstdio>

#include "base/error.h"

namespace asbx {
namespace {

using json = nlohmann::ordered_json;  // keys keep the order they were written in

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size() || (n == 2 && c < 0xC2)) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) >> 6) != 0x2) return 0;
  return n;
}

std::string escape_code_point(unsigned code) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", code);
  return buf;
}

// A double-quoted scalar. Escaped beyond JSON: DEL, the C1 controls, NEL, U+2028/2029 and the
// BOM, which YAML readers refuse or read as line breaks when they appear raw.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_length(s, i);
    if (n == 0) throw Error(ErrorKind::usage, "kube: a value is not valid UTF-8, so it cannot be written as YAML");
    unsigned char c = static_cast<unsigned char>(s[i]);
    unsigned c2 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0, c3 = n > 2 ? static_cast<unsigned char>(s[i + 2]) : 0;
    if (c == '"' || c == '\\') out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) out += escape_code_point(c);
    else if (c == 0xC2 && c2 < 0xA0) out += escape_code_point(c2);                         // U+0080..U+009F
    else if (c == 0xE2 && c2 == 0x80 && (c3 == 0xA8 || c3 == 0xA9)) out += escape_code_point(0x2000 + c3 - 0x80);
    else if (c == 0xEF && c2 == 0xBB && c3 == 0xBF) out += "\\ufeff";
    else out.append(s, i, n);
    i += n;
  }
  return out + "\"";
}

// A key no YAML 1.1 or 1.2 reader can take for anything but that string.
bool plain_key(const std::string& k) {
  static const char* const words[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"};
  if (k.empty() || !std::isalpha(static_cast<unsigned char>(k[0]))) return false;
  for (char c : k)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' && c != '/') return false;
  std::string lower;
  for (char c : k) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : words)
    if (lower == w) return false;
  return true;
}

std::string scalar(const json& v) {
  if (v.is_string()) return quoted(v.get<std::string>());
  if (v.is_object()) return "{}";  // only reached when empty
  if (v.is_array()) return "[]";
  return v.dump();  // numbers, booleans, null: the same token in JSON and YAML
}

bool nested(const json& v) { return v.is_structured() && !v.empty(); }

// The lines of a non-empty mapping or sequence, indented relative to it.
std::vector<std::string> block_lines(const json& v) {
  std::vector<std::string> out;
  auto nest = [&](const std::string& first, const std::string& rest, const json& child) {
    auto lines = block_lines(child);
    out.push_back(first + lines[0]);
    for (std::size_t i = 1; i < lines.size(); ++i) out.push_back(rest + lines[i]);
  };
  if (v.is_object()) {
    for (const auto& [key, child] : v.items()) {
      std::string k = plain_key(key) ? key : quoted(key);
      if (!nested(child)) {
        out.push_back(k + ": " + scalar(child));
        continue;
      }
      out.push_back(k + ":");
      for (const auto& line : block_lines(child)) out.push_back("  " + line);
    }
    return out;
  }
  for (const auto& item : v) {
    if (nested(item)) nest("- ", "  ", item);
    else out.push_back("- " + scalar(item));
  }
  return out;
}

}  // namespace

std::string to_yaml(const json& value) {
  if (!nested(value)) return scalar(value) + "\n";
  std::string out;
  for (const auto& line : block_lines(value)) out += line + "\n";
  return out;
}

std::string yaml_stream(const std::vector<json>& documents) {
  std::string out;
  for (std::size_t i = 0; i < documents.size(); ++i) out += (i ? "---\n" : "") + to_yaml(documents[i]);
  return out;
}

}  // namespace asbx
