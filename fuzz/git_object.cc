// Loose git objects and refs (gitscan/objects.cc, gitscan/refs.cc), as the agent may have written
// them: inflation stays within its bound, parsed ids are hex of the right size, and HEAD or
// packed-refs accepted for the host hold only safe ref names.
#include "fuzz/fuzz.h"
#include "gitscan/objects.h"
#include "gitscan/refs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  std::string bytes = asbx::fuzz::text(data, size);
  if (auto obj = asbx::read_loose_object(bytes, 1 << 16); obj && obj->body.size() > (1 << 16))
    violated("inflated past the bound");
  // The raw bytes as an inflated body too: the parsers see what a hostile object could hold.
  if (auto c = asbx::parse_commit(bytes, 20)) {
    if (!asbx::is_hex_id(c->tree, 20)) violated("a commit tree that is not an id");
    for (const auto& p : c->parents)
      if (!asbx::is_hex_id(p, 20)) violated("a parent that is not an id");
  }
  if (auto t = asbx::parse_tree(bytes, 20, 1000))
    for (const auto& e : *t)
      if (e.name.empty() || e.name.find('\0') != std::string::npos || !asbx::is_hex_id(e.id, 20))
        violated("a malformed tree entry");
  if (auto tag = asbx::parse_tag_target(bytes, 20); tag && !asbx::is_hex_id(*tag, 20)) violated("a tag target");
  if (asbx::check_head(bytes, 20).empty() && bytes.rfind("ref: ", 0) == 0 &&
      !asbx::is_safe_refname(bytes.substr(5, bytes.size() - 6)))
    violated("an unsafe HEAD accepted");
  std::string why;
  if (auto refs = asbx::parse_packed_refs(bytes, 20, why))
    for (const auto& [name, id] : *refs)
      if (!asbx::is_safe_refname(name) || !asbx::is_hex_id(id, 20)) violated("an unsafe packed ref accepted");
  asbx::fuzz::message_fits_json(why.c_str());
  return 0;
}
