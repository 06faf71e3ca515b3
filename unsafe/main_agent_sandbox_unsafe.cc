// agent-sandbox-unsafe: the human-only hatch (unsafe/hatch.h). Not linked into agent-sandbox.
#include <cstdio>
#include <string>

#include "base/error.h"
#include "unsafe/hatch.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("agent-sandbox-unsafe %s\n", ASBX_VERSION);
    return 0;
  }
  bool help = false;
  try {
    auto command = asbx::unsafe::parse_command({argv + 1, argv + argc}, help);
    return help ? 0 : asbx::unsafe::run_hatch(command, {});
  } catch (const asbx::Error& e) {
    std::fprintf(stderr, "agent-sandbox-unsafe: %s\n", e.what());
    return e.exit_code();
  }
}
