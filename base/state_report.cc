#include "base/state_report.h"

namespace asbx {

void StateReport::skip(const std::string& path, const std::string& reason) {
  if (skipped.size() < kMaxNamedSkips)
    skipped.push_back({path, reason});
  else
    ++skipped_unnamed;
}

nlohmann::json state_json(const StateReport& r) {
  if (!r.collected) return nullptr;
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"path", s.path}, {"reason", s.reason}});
  return {{"dir", r.dir},
          {"files", r.files},
          {"bytes", r.bytes},
          {"skipped", skipped},
          {"skipped_unnamed", r.skipped_unnamed},
          {"error", r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error)}};
}

StateReport state_from_json(const nlohmann::json& j) {
  StateReport r;
  if (!j.is_object()) return r;
  auto skipped = j.value("skipped", nlohmann::json::array());
  if (skipped.is_array())
    for (const auto& s : skipped)
      if (s.is_object() && s.value("path", nlohmann::json()).is_string() && s.value("reason", nlohmann::json()).is_string())
        r.skip(s["path"].get<std::string>(), s["reason"].get<std::string>());
  auto unnamed = j.value("skipped_unnamed", nlohmann::json());
  if (unnamed.is_number_integer()) r.skipped_unnamed += unnamed.get<std::int64_t>();
  auto error = j.value("error", nlohmann::json());
  if (error.is_string()) r.error = error.get<std::string>();
  return r;
}

}  // namespace asbx
