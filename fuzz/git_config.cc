// Git config text (gitscan/config.cc), as the agent may have written it: a total parse; every
// entry's key ends in a canonical name (lowercase, a letter first); the dangerous keys are
// a subset of the keys; the messages fit a JSON record.
#include "fuzz/fuzz.h"
#include "gitscan/config.h"
#include "gitscan/safe_git.h"

#include <algorithm>
#include <cctype>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  auto parsed = asbx::parse_git_config(asbx::fuzz::text(data, size), 1000);
  asbx::fuzz::message_fits_json(parsed.error.c_str());
  for (const auto& e : parsed.entries) {
    auto k = asbx::split_git_key(e.key);
    // git itself takes "[.a]" (a section of dots): only the name is sure to be there.
    if (k.name.empty() || !std::isalpha(static_cast<unsigned char>(k.name[0]))) violated("a key without a name: " + e.key);
    for (char c : k.name)
      if (std::isupper(static_cast<unsigned char>(c))) violated("a key name not lowercased: " + e.key);
    if (!e.has_value && !e.value.empty()) violated("a value without '='");
  }
  for (const auto& key : asbx::dangerous_keys(parsed.entries))
    if (std::none_of(parsed.entries.begin(), parsed.entries.end(), [&](const auto& e) { return e.key == key; }))
      violated("a dangerous key that is not an entry: " + key);
  auto rows = asbx::safe_git_overrides(parsed.entries);
  if (rows.size() < 20) violated("the fixed overrides are missing");
  return 0;
}
