// A git index (gitscan/index.cc), as the agent may have written it: a total parse of any bytes,
// never reading past them; an index whose structure is sound has its gitlinks within its entries.
#include "fuzz/fuzz.h"
#include "gitscan/index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  std::string bytes = asbx::fuzz::text(data, size);
  for (std::size_t hash : {20, 32}) {
    auto s = asbx::parse_git_index(bytes, hash, 100);
    asbx::fuzz::message_fits_json(s.error.c_str());
    if (s.error.empty() && s.gitlinks.size() > s.entries) violated("more gitlinks than entries");
    if (s.gitlinks.size() > 100) violated("more gitlinks than asked for");
    for (const auto& g : s.gitlinks)
      if (g.empty()) violated("an empty gitlink path");
  }
  return 0;
}
