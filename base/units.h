// Parsing of sizes ("12g") and durations ("90s", "2m"); pure, throws Error(usage).
#pragma once
#include <cstdint>
#include <string>

namespace asbx {

// "512", "64k", "512m", "12g" (binary units, case-insensitive) → bytes.
std::int64_t parse_size(const std::string& text, const std::string& what);
// "30", "30s", "500ms", "2m", "1h" → milliseconds. Bare numbers are seconds.
std::int64_t parse_duration_ms(const std::string& text, const std::string& what);
std::string format_size(std::int64_t bytes);

}  // namespace asbx
