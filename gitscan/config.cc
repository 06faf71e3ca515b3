#include "gitscan/config.h"

#include <algorithm>
#include <cctype>

#include "base/util.h"

namespace asbx {
namespace {

bool is_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

// Git's reader, one character at a time: "\r\n" reads as "\n", the end of the text as a
// final "\n" (so every construct ends the way a line does).
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a UTF-8 BOM, skipped as git does
  }
  char next() {
    if (pos_ >= text_.size()) {
      eof_ = true;
      return '\n';
    }
    char c = text_[pos_++];
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') c = text_[pos_++];
    if (c == '\n') ++line_;
    return c;
  }
  bool eof() const { return eof_; }
  int line() const { return line_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  bool eof_ = false;
};

// `[section "subsection"]` after the space: the quoted name, escapes \" and \\ (any other
// escaped character stands for itself), then ']'.
bool read_subsection(Reader& r, std::string& section) {
  char c = r.next();
  while (c == ' ' || c == '\t') c = r.next();
  if (c != '"') return false;
  section += '.';
  for (c = r.next(); c != '"'; c = r.next()) {
    if (c == '\n') return false;
    if (c == '\\' && (c = r.next()) == '\n') return false;
    section += c;
  }
  return r.next() == ']';
}

// After '[': the section name (lowercased; the old `[a.b]` form entirely), then its subsection.
bool read_section(Reader& r, std::string& section) {
  section.clear();
  for (;;) {
    char c = r.next();
    if (r.eof() || c == '\n') return false;
    if (c == ' ' || c == '\t') return !section.empty() && read_subsection(r, section);
    if (c == ']') return !section.empty();
    if (!is_key_char(c) && c != '.') return false;
    section += lower(c);
  }
}

// After '=': quotes toggle, \n \t \b \\ \" escapes, backslash-newline continues the line,
// unquoted # or ; starts a comment, unquoted whitespace runs are kept inside, dropped at the ends.
bool read_value(Reader& r, std::string& value) {
  bool quote = false, comment = false;
  std::size_t spaces = 0;
  for (;;) {
    char c = r.next();
    if (c == '\n') return !quote;
    if (comment) continue;
    if (is_space(c) && !quote) {
      if (!value.empty()) ++spaces;
      continue;
    }
    if (!quote && (c == ';' || c == '#')) {
      comment = true;
      continue;
    }
    value.append(spaces, ' ');
    spaces = 0;
    if (c == '\\') {
      c = r.next();
      if (c == '\n') continue;
      if (c == 't') c = '\t';
      else if (c == 'b') c = '\b';
      else if (c == 'n') c = '\n';
      else if (c != '\\' && c != '"') return false;
      value += c;
    } else if (c == '"') {
      quote = !quote;
    } else {
      value += c;
    }
  }
}

// A key from its first letter: letters, digits and '-', lowercased; then "= value" or the line's end.
bool read_entry(Reader& r, char first, const std::string& section, GitConfigEntry& e) {
  std::string name(1, lower(first));
  char c = r.next();
  for (; !r.eof() && is_key_char(c); c = r.next()) name += lower(c);
  while (c == ' ' || c == '\t') c = r.next();
  e.key = section + "." + name;
  if (c == '\n') return true;
  if (c != '=') return false;
  e.has_value = true;
  return read_value(r, e.value);
}

bool falsy(const std::string& v) {
  std::string l;
  for (char c : v) l += lower(c);
  return l == "false" || l == "no" || l == "off" || l == "0" || l.empty();
}

bool boolish(const GitConfigEntry& e) {
  std::string l;
  for (char c : e.value) l += lower(c);
  return !e.has_value || falsy(e.value) || l == "true" || l == "yes" || l == "on" || l == "1";
}

const char* const kPlainKeys[] = {"core.hookspath", "core.sshcommand", "core.editor", "core.pager", "core.askpass",
                                  "core.gitproxy", "core.alternaterefscommand", "core.worktree", "sequence.editor",
                                  "diff.external", "credential.helper", "include.path", "gpg.program",
                                  "interactive.difffilter", "extensions.worktreeconfig"};
// section, name: with any subsection.
const char* const kDriverKeys[][2] = {{"filter", "clean"},       {"filter", "smudge"},     {"filter", "process"},
                                      {"diff", "command"},       {"diff", "textconv"},     {"merge", "driver"},
                                      {"credential", "helper"},  {"includeif", "path"},    {"remote", "uploadpack"},
                                      {"remote", "receivepack"}, {"difftool", "cmd"},      {"mergetool", "cmd"},
                                      {"gpg", "program"},        {"gpg", "defaultkeycommand"}};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool listed(const GitConfigEntry& e, const GitKeyParts& k) {
  if (k.subsection.empty())
    return std::any_of(std::begin(kPlainKeys), std::end(kPlainKeys), [&](const char* key) { return e.key == key; });
  return std::any_of(std::begin(kDriverKeys), std::end(kDriverKeys),
                     [&](const auto& row) { return k.section == row[0] && k.name == row[1]; });
}

}  // namespace

GitConfigParse parse_git_config(std::string_view text, std::size_t max_entries) {
  GitConfigParse out;
  Reader r(text);
  std::string section;
  bool comment = false;
  int line = 1;  // where the construct being read started
  auto fail = [&](const std::string& why) {
    out.error = "line " + std::to_string(line) + ": " + why;
    return out;
  };
  for (;;) {
    line = r.line();
    char c = r.next();
    if (c == '\n') {
      if (r.eof()) return out;
      comment = false;
    } else if (comment || is_space(c)) {
      continue;
    } else if (c == '#' || c == ';') {
      comment = true;
    } else if (c == '[') {
      if (!read_section(r, section)) return fail("bad section header");
    } else if (!std::isalpha(static_cast<unsigned char>(c)) || section.empty()) {
      return fail(section.empty() ? "a key before any section" : "a key must start with a letter");
    } else {
      GitConfigEntry e;
      e.line = line;
      if (!read_entry(r, c, section, e)) return fail("bad value for a key of [" + printable(section) + "]");
      if (out.entries.size() >= max_entries) return fail("more than " + std::to_string(max_entries) + " entries");
      out.entries.push_back(std::move(e));
    }
  }
}

GitKeyParts split_git_key(const std::string& key) {
  GitKeyParts p;
  auto first = key.find('.'), last = key.rfind('.');
  if (first == std::string::npos) return {key, "", ""};
  p.section = key.substr(0, first);
  p.name = key.substr(last + 1);
  if (last > first) p.subsection = key.substr(first + 1, last - first - 1);
  return p;
}

bool runs_or_redirects(const GitConfigEntry& e) {
  GitKeyParts k = split_git_key(e.key);
  if (e.key == "core.fsmonitor") return !boolish(e);  // a path is a hook the host would run
  if (k.section == "pager" && k.subsection.empty()) return !boolish(e);  // pager.<cmd> = PROGRAM
  if (k.section == "alias" && k.subsection.empty()) return starts_with(e.value, "!");
  if (k.section == "submodule" && k.name == "update") return starts_with(e.value, "!");
  if ((k.section == "remote" && (k.name == "url" || k.name == "pushurl")) ||
      (k.section == "url" && (k.name == "insteadof" || k.name == "pushinsteadof")))
    return starts_with(e.value, "ext::") || starts_with(k.subsection, "ext::");
  if (k.section == "protocol" && k.name == "allow") return (k.subsection.empty() || k.subsection == "ext") && !falsy(e.value) && e.value != "never";
  return listed(e, k);
}

std::vector<std::string> dangerous_keys(const std::vector<GitConfigEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries)
    if (runs_or_redirects(e) && std::find(out.begin(), out.end(), e.key) == out.end()) out.push_back(e.key);
  return out;
}

std::vector<std::string> include_paths(const std::vector<GitConfigEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    GitKeyParts k = split_git_key(e.key);
    if (e.has_value && k.name == "path" && ((k.section == "include" && k.subsection.empty()) || k.section == "includeif"))
      out.push_back(e.value);
  }
  return out;
}

std::size_t object_id_bytes(const std::vector<GitConfigEntry>& entries) {
  std::size_t bytes = 20;
  for (const auto& e : entries)
    if (e.key == "extensions.objectformat") {
      std::string v;
      for (char c : e.value) v += lower(c);
      bytes = v == "sha256" ? 32 : 20;
    }
  return bytes;
}

}  // namespace asbx
