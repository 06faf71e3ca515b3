// What one session's proxy let through and refused, as the status record and the ledger carry
// it: {"allowed": [{host, port, bytes_out, bytes_in, connections}], "refused": [{host, port,
// reason, count}]}. Thread-safe; host names are the agent's and stay bounded.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

namespace asbx {

class EgressTally {
 public:
  void connection(const std::string& host, int port);
  void bytes(const std::string& host, int port, std::int64_t out, std::int64_t in);
  // Returns false when the same refusal was already recorded (callers log only new kinds once).
  bool refused(const std::string& host, int port, const std::string& reason);
  nlohmann::json json() const;

  static constexpr std::size_t kMaxRefusedKinds = 256;  // past this, refusals count under "(other)"

 private:
  struct Flow { std::int64_t out = 0, in = 0, connections = 0; };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, Flow> allowed_;
  std::map<std::tuple<std::string, int, std::string>, std::int64_t> refused_;
};

// The agent's host name made safe for one stderr line and a JSON record: printable ASCII, at
// most 255 characters.
std::string printable_host(const std::string& host);

}  // namespace asbx
