#include "seccomp/refusal_tally.h"

namespace asbx {

RefusalTally::RefusalTally() : calls_(recorded_call_names().size(), 0), unattributed_(calls_.size(), 0) {}

bool RefusalTally::count(const RefusedCall& call, std::int64_t now_unix_ms) {
  if (call.by_arguments && call.call >= 0 && std::size_t(call.call) < unattributed_.size()) {
    ++unattributed_[std::size_t(call.call)];
    return false;
  }
  ++total_;
  if (call.call >= 0 && std::size_t(call.call) < calls_.size()) ++calls_[std::size_t(call.call)];
  else ++other_;
  if (call.family >= 0 && call.family < kFamilyBuckets) ++families_[std::size_t(call.family)];
  if (total_ != 1) return false;
  first_ = describe_refused(call);
  first_unix_ms_ = now_unix_ms;
  return true;
}

nlohmann::json RefusalTally::unattributed_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i < unattributed_.size(); ++i)
    if (unattributed_[i]) out[recorded_call_names()[i]] = unattributed_[i];
  return out;
}

nlohmann::json RefusalTally::json() const {
  nlohmann::json calls = nlohmann::json::object(), families = nlohmann::json::object();
  for (std::size_t i = 0; i < calls_.size(); ++i)
    if (calls_[i]) calls[recorded_call_names()[i]] = calls_[i];
  for (int b = 0; b < kFamilyBuckets; ++b)
    if (families_[std::size_t(b)]) families[family_bucket_name(b)] = families_[std::size_t(b)];
  return {{"refused", total_},
          {"calls", calls},
          {"socket_families", families},
          {"other", other_},
          {"first", first_.empty() ? nlohmann::json(nullptr) : nlohmann::json(first_)},
          {"first_unix_ms", first_.empty() ? nlohmann::json(nullptr) : nlohmann::json(first_unix_ms_)}};
}

}  // namespace asbx
