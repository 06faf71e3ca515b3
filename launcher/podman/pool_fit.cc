#include "launcher/podman/pool_fit.h"

#include <openssl/evp.h>

#include "base/error.h"

namespace asbx {
namespace {

const char* const kPerSession[] = {"name", "command", "env", "labels", "work_dir", "resource_limits"};

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

}  // namespace

nlohmann::json pool_fit_body(const nlohmann::json& create_body) {
  nlohmann::json body = create_body;
  for (const char* key : kPerSession) body.erase(key);
  if (body.contains("mounts") && body["mounts"].is_array()) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& m : body["mounts"])
      if (!m.is_object() || m.value("type", "") != "bind") kept.push_back(m);
    body["mounts"] = kept;
  }
  return body;
}

std::string pool_fit_digest(const nlohmann::json& create_body) {
  return "sha256:" + sha256_hex(pool_fit_body(create_body).dump());  // nlohmann sorts object keys
}

}  // namespace asbx
