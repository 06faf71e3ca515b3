// SHA-256 of a byte string as 64 hex digits (FIPS 180-4). Pure: the policy floor names things by
// their digest (the seccomp profile) without the TLS library, which only the mechanism may use.
#pragma once
#include <string>
#include <string_view>

namespace asbx {

std::string sha256_hex(std::string_view data);

}  // namespace asbx
