#include "tripwire/tally.h"

namespace asbx {
namespace {

const char* const kOther = "(other)";

template <class Map, class Key>
typename Map::mapped_type& bounded_entry(Map& map, const Key& key, const Key& other) {
  auto it = map.find(key);
  if (it != map.end()) return it->second;
  return map.size() < TripwireTally::kMaxEntries ? map[key] : map[other];
}

nlohmann::json seen_json(nlohmann::json entry, std::int64_t count, std::int64_t first) {
  entry["count"] = count;
  entry["first_unix_ms"] = first;
  return entry;
}

}  // namespace

std::string describe_canary(const std::string& path) {
  bool dir = !path.empty() && path.back() == '/';
  return "canary ~/" + path + (dir ? " listed" : " opened");
}

void TripwireTally::count(Seen& s, std::int64_t now) {
  if (s.count++ == 0) s.first_unix_ms = now;
}

bool TripwireTally::first_of_kind(int kind, const std::string& described) {
  if (first_.empty()) first_ = described;
  unsigned bit = 1u << kind;
  if (kinds_seen_ & bit) return false;
  kinds_seen_ |= bit;
  return true;
}

bool TripwireTally::attempt(const Attempt& a, std::int64_t now) {
  if (a.kind == AttemptKind::none) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (a.kind == AttemptKind::dns) {
    count(bounded_entry(dns_, a.dns_name.substr(0, 255), std::string(kOther)), now);
  } else {
    auto key = std::make_tuple(a.protocol, a.destination.text(), a.port);
    count(bounded_entry(network_, key, std::make_tuple(std::string(kOther), std::string(kOther), -1)), now);
  }
  return first_of_kind(static_cast<int>(a.kind), describe(a));
}

bool TripwireTally::canary(const std::string& path, std::int64_t now) {
  std::lock_guard<std::mutex> lock(mutex_);
  count(bounded_entry(canaries_, path, std::string(kOther)), now);
  return first_of_kind(8, describe_canary(path));
}

std::string TripwireTally::first() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_;
}

nlohmann::json TripwireTally::json(bool network_armed, bool canaries_armed) const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json network = nlohmann::json::array(), dns = nlohmann::json::array(), canaries = nlohmann::json::array();
  for (const auto& [key, s] : network_) {
    const auto& [protocol, destination, port] = key;
    nlohmann::json p = port < 0 ? nlohmann::json(nullptr) : nlohmann::json(port);
    network.push_back(seen_json({{"protocol", protocol}, {"destination", destination}, {"port", p}}, s.count, s.first_unix_ms));
  }
  for (const auto& [name, s] : dns_) dns.push_back(seen_json({{"name", name}}, s.count, s.first_unix_ms));
  for (const auto& [path, s] : canaries_) canaries.push_back(seen_json({{"path", path}}, s.count, s.first_unix_ms));
  return {{"network", network_armed ? network : nlohmann::json(nullptr)},
          {"dns", network_armed ? dns : nlohmann::json(nullptr)},
          {"canaries", canaries_armed ? canaries : nlohmann::json(nullptr)},
          {"first", first_.empty() ? nlohmann::json(nullptr) : nlohmann::json(first_)}};
}

}  // namespace asbx
