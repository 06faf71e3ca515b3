// The seat config (TOML on the seat, launcher/config.cc): any bytes either give a config or
// fail with Error(config) naming file:line. Any other exception or a sanitizer report is a bug.
#include "fuzz/fuzz.h"
#include "plan/config.h"
#include "base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const asbx::UserFacts user{1000, 1000, "agent", "/home/agent", "", "", ""};
  try {
    asbx::parse_seat_config(asbx::fuzz::text(data, size), "seat.toml", user);
  } catch (const asbx::Error& e) {
    asbx::fuzz::message_fits_json(e.what());
    if (e.kind() != asbx::ErrorKind::config) asbx::fuzz::violated(std::string("not a config error: ") + e.what());
    if (std::string(e.what()).rfind("seat.toml:", 0) != 0) asbx::fuzz::violated(std::string("no file:line: ") + e.what());
  }
  return 0;
}
