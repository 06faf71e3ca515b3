#include "egress/tally.h"

namespace asbx {

std::string printable_host(const std::string& host) {
  std::string out;
  for (char c : host.substr(0, 255)) out += (c > 0x20 && c < 0x7f && c != '"' && c != '\\') ? c : '?';
  return out.empty() ? "?" : out;
}

void EgressTally::connection(const std::string& host, int port) {
  std::lock_guard lock(mutex_);
  allowed_[{host, port}].connections++;
}

void EgressTally::bytes(const std::string& host, int port, std::int64_t out, std::int64_t in) {
  std::lock_guard lock(mutex_);
  Flow& f = allowed_[{host, port}];
  f.out += out;
  f.in += in;
}

bool EgressTally::refused(const std::string& host, int port, const std::string& reason) {
  std::lock_guard lock(mutex_);
  auto key = std::make_tuple(printable_host(host), port, reason);
  if (!refused_.count(key) && refused_.size() >= kMaxRefusedKinds) key = std::make_tuple("(other)", 0, reason);
  return refused_[key]++ == 0;
}

nlohmann::json EgressTally::json() const {
  std::lock_guard lock(mutex_);
  nlohmann::json allowed = nlohmann::json::array(), refused = nlohmann::json::array();
  for (const auto& [key, f] : allowed_)
    allowed.push_back({{"host", key.first}, {"port", key.second}, {"bytes_out", f.out}, {"bytes_in", f.in},
                       {"connections", f.connections}});
  for (const auto& [key, count] : refused_)
    refused.push_back({{"host", std::get<0>(key)}, {"port", std::get<1>(key)}, {"reason", std::get<2>(key)},
                       {"count", count}});
  return {{"allowed", allowed}, {"refused", refused}};
}

}  // namespace asbx
