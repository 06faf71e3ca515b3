#include <doctest/doctest.h>

#include "base/error.h"
#include "unsafe/hatch.h"

using namespace asbx;
using namespace asbx::unsafe;

namespace {

HatchFacts human() {
  HatchFacts f;
  f.stdin_tty = f.stdout_tty = true;
  f.environ = {{"HOME", "/home/h"}, {"TERM", "xterm"}, {"PATH", "/usr/bin"}};
  return f;
}

}  // namespace

TEST_CASE("a human at a terminal outside containers and agents is not refused") {
  CHECK_FALSE(refusal_reason(human()).has_value());
}

TEST_CASE("no terminal is refused, stdin first") {
  HatchFacts f = human();
  f.stdout_tty = false;
  CHECK(*refusal_reason(f) == "stdout is not a terminal: agent-sandbox-unsafe is for a human at a terminal");
  f.stdin_tty = false;
  CHECK(*refusal_reason(f) == "stdin is not a terminal: agent-sandbox-unsafe is for a human at a terminal");
}

TEST_CASE("each agent marker is refused by name") {
  for (const char* name : {"CODEX_SANDBOX", "CODEX_HOME", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CURSOR_AGENT",
                           "AGENT_SANDBOX_SESSION", "AGENT_SANDBOX_UNSAFE_SESSION"}) {
    HatchFacts f = human();
    f.environ[name] = "1";
    CHECK(*refusal_reason(f) == std::string("agent marker ") + name +
                                    " is set in the environment: an agent never runs on the host");
  }
  CHECK_FALSE(is_agent_marker("CODEX"));
  CHECK_FALSE(is_agent_marker("CLAUDE_CONFIG_DIR"));
}

TEST_CASE("container markers are refused: files, our environment, PID 1's environment") {
  HatchFacts f = human();
  f.pid1_environ = {{"container", "docker"}};
  CHECK(*refusal_reason(f) == "running inside a container (container=docker in PID 1's environment)");
  f.environ["container"] = "podman";
  CHECK(*refusal_reason(f) == "running inside a container (container=podman in the environment)");
  f.container_files_present = {"/run/.containerenv"};
  CHECK(*refusal_reason(f) == "running inside a container (/run/.containerenv exists)");
}

TEST_CASE("the scope: user manager for ordinary users, the system manager for root") {
  auto argv = systemd_run_argv("/usr/bin/systemd-run", true, 42, {"codex", "exec", "$HOME"});
  CHECK(argv == std::vector<std::string>{"/usr/bin/systemd-run", "--user", "--scope", "--slice=unsafe.slice",
                                         "--unit=agent-sandbox-unsafe-42", "--quiet",
                                         "--description=agent-sandbox-unsafe: codex", "--", "codex", "exec", "$HOME"});
  CHECK(systemd_run_argv("/bin/systemd-run", false, 7, {"x"})[1] == "--scope");
}

TEST_CASE("the command line: optional --, no options of its own but --help") {
  bool help = false;
  CHECK(parse_command({"--", "-x", "y"}, help) == std::vector<std::string>{"-x", "y"});
  CHECK(parse_command({"codex", "--yolo"}, help) == std::vector<std::string>{"codex", "--yolo"});
  CHECK_THROWS_WITH_AS(parse_command({"--fallback"}, help),
                       "unknown option '--fallback'; run 'agent-sandbox-unsafe --help'", Error);
}
