// The server name a TLS ClientHello asks for (the SNI extension). Pure, total, fuzzable.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace asbx {

struct SniResult {
  enum class Status { incomplete, not_tls, no_sni, ok };
  Status status = Status::incomplete;
  std::string name;  // host_name as sent (ok only)
};

// Reads the ClientHello from the first TLS handshake records of `bytes` (reassembled across
// records, at most 64 KiB). A ClientHello that is complete and carries no host_name is no_sni.
SniResult client_hello_sni(std::string_view bytes);

}  // namespace asbx
