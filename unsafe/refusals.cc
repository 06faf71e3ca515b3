#include "unsafe/refusals.h"

namespace asbx::unsafe {

const std::vector<std::string> kContainerFiles = {"/run/.containerenv", "/.dockerenv"};
const std::vector<std::string> kAgentMarkerNames = {
    "CLAUDECODE",             // claude code, in every command it runs
    "CLAUDE_CODE_ENTRYPOINT",  // likewise
    "CURSOR_AGENT",           // cursor-agent
    "AGENT_SANDBOX_SESSION",  // inside an agent-sandbox container
    "AGENT_SANDBOX_UNSAFE_SESSION",  // under this hatch already
};
const std::vector<std::string> kAgentMarkerPrefixes = {"CODEX_"};  // codex: CODEX_SANDBOX*, CODEX_HOME, ...
const char* const kUnsafeSessionMarker = "AGENT_SANDBOX_UNSAFE_SESSION";

bool is_agent_marker(const std::string& name) {
  for (const auto& exact : kAgentMarkerNames)
    if (name == exact) return true;
  for (const auto& prefix : kAgentMarkerPrefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

namespace {

std::optional<std::string> terminal_reason(const HatchFacts& f) {
  const char* which = !f.stdin_tty ? "stdin" : !f.stdout_tty ? "stdout" : nullptr;
  if (!which) return std::nullopt;
  return std::string(which) + " is not a terminal: agent-sandbox-unsafe is for a human at a terminal";
}

std::optional<std::string> marker_reason(const HatchFacts& f) {
  for (const auto& [name, value] : f.environ)
    if (is_agent_marker(name))
      return "agent marker " + name + " is set in the environment: an agent never runs on the host";
  return std::nullopt;
}

std::optional<std::string> container_reason(const HatchFacts& f) {
  if (!f.container_files_present.empty())
    return "running inside a container (" + f.container_files_present.front() + " exists)";
  if (auto it = f.environ.find("container"); it != f.environ.end())
    return "running inside a container (container=" + it->second + " in the environment)";
  if (auto it = f.pid1_environ.find("container"); it != f.pid1_environ.end())
    return "running inside a container (container=" + it->second + " in PID 1's environment)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> refusal_reason(const HatchFacts& f) {
  if (auto why = terminal_reason(f)) return why;
  if (auto why = marker_reason(f)) return why;
  return container_reason(f);
}

}  // namespace asbx::unsafe
