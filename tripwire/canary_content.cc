// The decoys' fake contents (tripwire/canaries.h): shaped like the real files so a payload takes
// them, random per session so a copy that surfaces elsewhere names its session (the record keeps
// the mark), and never a working credential (the shapes carry no valid checksums or keys).
#include <cstdint>

#include "tripwire/canaries.h"

namespace asbx {
namespace {

const char* const kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const char* const kAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const char* const kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// splitmix64 seeded from the mark and the path: the same session writes the same bytes.
class Filler {
 public:
  Filler(const std::string& mark, const std::string& path) {
    for (unsigned char c : mark + "\n" + path) state_ = (state_ ^ c) * 1099511628211ull;
  }
  std::string take(std::size_t n, const char* alphabet) {
    std::string out;
    std::size_t size = std::char_traits<char>::length(alphabet);
    while (out.size() < n) out += alphabet[next() % size];
    return out;
  }

 private:
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t state_ = 1469598103934665603ull;
};

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ssh_key(Filler& f) {
  std::string out = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  std::string body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW" + f.take(250, kBase64);
  for (std::size_t at = 0; at < body.size(); at += 70) out += body.substr(at, 70) + "\n";
  return out + "-----END OPENSSH PRIVATE KEY-----\n";
}

}  // namespace

std::string canary_content(const std::string& path, const std::string& mark) {
  Filler f(mark, path);
  std::string name = base_name(path);
  if (name.rfind("id_", 0) == 0) return ssh_key(f);
  if (path == ".aws/credentials")
    return "[default]\naws_access_key_id = AKIA" + f.take(16, kUpper) + "\naws_secret_access_key = " + f.take(40, kBase64) + "\n";
  if (name == ".npmrc") return "//registry.npmjs.org/:_authToken=npm_" + f.take(36, kAlnum) + "\n";
  if (path == ".config/gh/hosts.yml")
    return "github.com:\n    oauth_token: gho_" + f.take(36, kAlnum) + "\n    user: agent\n    git_protocol: https\n";
  if (path == ".docker/config.json")
    return "{\n\t\"auths\": {\n\t\t\"https://index.docker.io/v1/\": {\n\t\t\t\"auth\": \"" + f.take(52, kBase64) + "=\"\n\t\t}\n\t}\n}\n";
  if (name == ".git-credentials") return "https://agent:ghp_" + f.take(36, kAlnum) + "@github.com\n";
  if (path == ".kube/config")
    return "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://kubernetes.internal:6443\n  name: prod\n"
           "contexts:\n- context:\n    cluster: prod\n    user: deploy\n  name: prod\ncurrent-context: prod\n"
           "users:\n- name: deploy\n  user:\n    token: " + f.take(64, kAlnum) + "\n";
  if (name == ".pypirc") return "[pypi]\nusername = __token__\npassword = pypi-" + f.take(80, kAlnum) + "\n";
  if (name == "application_default_credentials.json")
    return "{\n  \"client_id\": \"" + f.take(12, "0123456789") + "-" + f.take(32, kAlnum) +
           ".apps.googleusercontent.com\",\n  \"client_secret\": \"GOCSPX-" + f.take(28, kAlnum) +
           "\",\n  \"refresh_token\": \"1//0" + f.take(96, kAlnum) + "\",\n  \"type\": \"authorized_user\"\n}\n";
  return "token = " + f.take(40, kAlnum) + "\n";
}

}  // namespace asbx
