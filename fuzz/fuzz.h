// Shared by the libFuzzer targets: bytes as text, and the one way a property fails.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace asbx::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input split at NUL bytes: several independent strings from one input.
inline std::vector<std::string> parts(const std::string& all) {
  std::vector<std::string> out(1);
  for (char c : all) {
    if (c == '\0') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// A broken property is a crash libFuzzer records (abort), with the reason on stderr.
[[noreturn]] inline void violated(const std::string& why) {
  std::fprintf(stderr, "property violated: %s\n", why.c_str());
  std::abort();
}

// An error message goes into the status record and the ledger (JSON): it must be valid UTF-8.
inline void message_fits_json(const char* message) {
  try {
    (void)nlohmann::json(message).dump();
  } catch (const nlohmann::json::exception&) {
    violated(std::string("message is not valid UTF-8: ") + message);
  }
}

}  // namespace asbx::fuzz
