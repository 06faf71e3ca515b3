// A JSON value (keys in insertion order) written as block-style YAML, for manifests a person reads (`agent-sandbox kube`).
//
// Why a few lines of our own and not a YAML library: the output only has to be read, never
// parsed here, and JSON is a subset of YAML 1.2. Every string is written as a double-quoted
// scalar with JSON-compatible escapes, so no YAML reader (1.1 or 1.2) turns "no", "0755",
// "1e3" or "null" into something else; mapping keys stay plain only when they are words no
// reader can mistake. Pure.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace asbx {

// Throws Error(usage) when a string is not valid UTF-8 (YAML is Unicode text).
std::string to_yaml(const nlohmann::ordered_json& value);
// Documents separated by "---" lines: a YAML stream.
std::string yaml_stream(const std::vector<nlohmann::ordered_json>& documents);

}  // namespace asbx
