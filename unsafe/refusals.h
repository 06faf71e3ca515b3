// agent-sandbox-unsafe decides from plain facts whether a human at a terminal asked for it.
// Pure: the facts are gathered in hatch.cc; tests feed their own.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace asbx::unsafe {

struct HatchFacts {
  bool stdin_tty = false;
  bool stdout_tty = false;
  std::map<std::string, std::string> environ;       // our own environment
  std::map<std::string, std::string> pid1_environ;  // PID 1's, when readable (root); else empty
  std::vector<std::string> container_files_present;  // which of kContainerFiles exist
};

// Files a container runtime leaves at the root of a container (podman, docker).
extern const std::vector<std::string> kContainerFiles;
// Exact names, then prefixes, of variables that only an agent (or our own sessions) set.
extern const std::vector<std::string> kAgentMarkerNames;
extern const std::vector<std::string> kAgentMarkerPrefixes;
// Set by the hatch for the agent it starts, so that agent cannot start another.
extern const char* const kUnsafeSessionMarker;

bool is_agent_marker(const std::string& name);
// The first reason to refuse, or nullopt: the terminal, then agent markers, then container markers.
std::optional<std::string> refusal_reason(const HatchFacts& facts);

}  // namespace asbx::unsafe
