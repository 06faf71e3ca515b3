#include "launcher/podman/pool_fit.h"

#include <openssl/evp.h>

#include "base/error.h"

namespace asbx {
namespace {

// The limits too: a claim applies the session's to the member's cgroup (launcher/pool/warm_limits.h).
const char* const kPerSession[] = {"name", "labels", "resource_limits"};

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw Error(ErrorKind::internal, "sha256 of the pool's fit body failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

void replace_in_strings(nlohmann::json& j, const std::string& from, const std::string& to) {
  if (j.is_string()) {
    std::string text = j.get<std::string>();
    for (std::size_t at = text.find(from); !from.empty() && at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    j = text;
  } else if (j.is_structured()) {
    for (auto& child : j) replace_in_strings(child, from, to);
  }
}

}  // namespace

nlohmann::json pool_fit_body(const nlohmann::json& create_body, const std::string& session_id) {
  nlohmann::json body = create_body;
  for (const char* key : kPerSession) body.erase(key);
  replace_in_strings(body, session_id, "{session}");
  if (body.contains("idmappings") && body["idmappings"].is_object())
    for (auto& map : body["idmappings"])
      if (map.is_array())
        for (auto& row : map)
          if (row.is_object() && row.contains("host_id")) row["host_id"] = 0;
  return body;
}

std::string pool_fit_digest(const nlohmann::json& create_body, const std::string& session_id) {
  return "sha256:" + sha256_hex(pool_fit_body(create_body, session_id).dump());  // nlohmann sorts object keys
}

}  // namespace asbx
