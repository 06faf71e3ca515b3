// The credential table (TOML, credtable/credtable.cc): rows or Error(config). An accepted row's
// destination must stay inside the ephemeral HOME: relative, no '.', '..' or empty component.
#include "credtable/credtable.h"
#include "fuzz/fuzz.h"
#include "base/error.h"

namespace {

bool stays_inside(const std::string& d) {
  if (d.empty() || d.front() == '/' || d.back() == '/') return false;
  for (std::size_t at = 0, next; at <= d.size(); at = next + 1) {
    next = d.find('/', at);
    if (next == std::string::npos) next = d.size();
    std::string part = d.substr(at, next - at);
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  try {
    asbx::CredTable table = asbx::parse_credtable(asbx::fuzz::text(data, size), "credtable.toml");
    for (const auto& row : table.rows) {
      if (row.name.empty() || row.command.empty()) violated("row accepted without a name or command");
      if (!stays_inside(row.destination)) violated("destination leaves HOME: " + row.destination);
    }
  } catch (const asbx::Error& e) {
    asbx::fuzz::message_fits_json(e.what());
    if (e.kind() != asbx::ErrorKind::config) violated(std::string("not a config error: ") + e.what());
  }
  return 0;
}
