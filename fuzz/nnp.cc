// NoNewPrivs from /proc/self/status text (preflight/nnp.cc): 0, 1 or Error(internal);
// a value is only returned when a "NoNewPrivs:" line exists.
#include "fuzz/fuzz.h"
#include "base/error.h"
#include "preflight/nnp.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  const std::string status = asbx::fuzz::text(data, size);
  try {
    int value = asbx::parse_no_new_privs(status);
    if (value != 0 && value != 1) violated("NoNewPrivs value not 0 or 1");
    if (status.rfind("NoNewPrivs:", 0) != 0 && status.find("\nNoNewPrivs:") == std::string::npos)
      violated("a value without a NoNewPrivs line");
  } catch (const asbx::Error& e) {
    if (e.kind() != asbx::ErrorKind::internal) violated(std::string("unexpected kind: ") + e.what());
  }
  return 0;
}
