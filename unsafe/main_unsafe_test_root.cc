// Test build only (never installed): agent-sandbox-unsafe with its container-marker files
// and /run/systemd/system looked up under `--test-root DIR`, so the refusal paths and the
// systemd check can be exercised on any machine, itself a container or not, with systemd
// or without. A flag of a separate executable, never an environment variable of the real one.
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "unsafe/hatch.h"

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "--test-root") != 0) {
    std::fprintf(stderr, "usage: %s --test-root DIR [--] COMMAND [ARG...]\n", argv[0]);
    return asbx::exit_code_of(asbx::ErrorKind::usage);
  }
  bool help = false;
  try {
    auto command = asbx::unsafe::parse_command({argv + 3, argv + argc}, help);
    return help ? 0 : asbx::unsafe::run_hatch(command, {argv[2]});
  } catch (const asbx::Error& e) {
    std::fprintf(stderr, "agent-sandbox-unsafe: %s\n", e.what());
    return e.exit_code();
  }
}
