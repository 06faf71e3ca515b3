#include "launcher/remote/quote.h"

#include <cctype>

namespace asbx {
namespace {

bool plain(const std::string& word) {
  if (word.empty()) return false;
  for (unsigned char c : word)
    if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/' || c == ',' || c == ':' || c == '=' ||
          c == '+' || c == '@' || c == '%'))
      return false;
  return true;
}

}  // namespace

std::string shell_quote(const std::string& word) {
  if (plain(word)) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

}  // namespace asbx
