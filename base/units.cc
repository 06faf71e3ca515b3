#include "base/units.h"

#include <cctype>
#include <limits>

#include "base/error.h"

namespace asbx {
namespace {

// Splits "12g" into 12 and "g"; throws when there is no leading number.
std::int64_t leading_number(const std::string& text, std::string& suffix, const std::string& what) {
  std::size_t i = 0;
  std::int64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
      throw Error(ErrorKind::usage, what + ": '" + text + "' is too large");
    value = value * 10 + (text[i++] - '0');
  }
  if (i == 0) throw Error(ErrorKind::usage, what + ": '" + text + "' is not a number");
  suffix = text.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value;
}

std::int64_t scaled(std::int64_t value, std::int64_t unit, const std::string& text, const std::string& what) {
  if (value > std::numeric_limits<std::int64_t>::max() / unit)
    throw Error(ErrorKind::usage, what + ": '" + text + "' is too large");
  return value * unit;
}

}  // namespace

std::int64_t parse_size(const std::string& text, const std::string& what) {
  std::string suffix;
  std::int64_t value = leading_number(text, suffix, what);
  if (suffix.size() == 2 && suffix[1] == 'b') suffix.pop_back();
  if (suffix.empty() || suffix == "b") return value;
  if (suffix == "k") return scaled(value, 1LL << 10, text, what);
  if (suffix == "m") return scaled(value, 1LL << 20, text, what);
  if (suffix == "g") return scaled(value, 1LL << 30, text, what);
  throw Error(ErrorKind::usage, what + ": '" + text + "' has an unknown unit (use k, m or g)");
}

std::int64_t parse_duration_ms(const std::string& text, const std::string& what) {
  std::string suffix;
  std::int64_t value = leading_number(text, suffix, what);
  if (suffix == "ms") return value;
  if (suffix.empty() || suffix == "s") return scaled(value, 1000, text, what);
  if (suffix == "m") return scaled(value, 60'000, text, what);
  if (suffix == "h") return scaled(value, 3'600'000, text, what);
  throw Error(ErrorKind::usage, what + ": '" + text + "' has an unknown unit (use ms, s, m or h)");
}

std::string format_size(std::int64_t bytes) {
  const char* units[] = {"g", "m", "k"};
  const std::int64_t sizes[] = {1LL << 30, 1LL << 20, 1LL << 10};
  for (int i = 0; i < 3; ++i)
    if (bytes >= sizes[i] && bytes % sizes[i] == 0) return std::to_string(bytes / sizes[i]) + units[i];
  return std::to_string(bytes);
}

}  // namespace asbx
