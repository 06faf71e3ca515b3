// A small POSIX sh word reader for arguments (not the command word): what a shell makes of a
// command line, written from the rules in XCU 2.2-2.6, independent of launcher/remote/quote.cc.
// It answers only for literal words: anything a shell would expand, glob, redirect or treat as
// an operator makes it return nullopt, because then the result depends on the seat.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace asbx::fuzz {

inline std::optional<std::vector<std::string>> posix_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word), word.clear(), in_word = false;
      continue;
    }
    const bool starts = !in_word;
    in_word = true;
    if (c == '\'') {  // single quotes: every byte literal up to the next '
      std::size_t end = line.find('\'', i + 1);
      if (end == std::string::npos) return std::nullopt;
      word += line.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {  // double quotes: \ escapes $ ` " \ and newline; $ and ` expand
      for (++i;; ++i) {
        if (i >= line.size()) return std::nullopt;
        char d = line[i];
        if (d == '"') break;
        if (d == '$' || d == '`') return std::nullopt;
        if (d == '\\' && i + 1 < line.size() && std::string("$`\"\\\n").find(line[i + 1]) != std::string::npos) {
          if (line[++i] != '\n') word += line[i];
        } else {
          word += d;
        }
      }
    } else if (c == '\\') {  // backslash: the next byte literal; \newline is a continuation
      if (i + 1 >= line.size()) return std::nullopt;
      if (line[++i] != '\n') word += line[i];
    } else if (std::string("|&;<>()$`\n*?[{}!^").find(c) != std::string::npos) {
      return std::nullopt;  // operators, expansions, globs (and bash's braces, history, old pipe)
    } else if (starts && (c == '~' || c == '#')) {
      return std::nullopt;  // tilde expansion, comment
    } else if (c == '~') {
      return std::nullopt;  // bash also expands ~ after = and : in arguments
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace asbx::fuzz
