#include "base/util.h"

#include <cerrno>
#include <sys/stat.h>

#include "base/dir_walk.h"
#include "base/seat_config.h"

namespace asbx {
namespace {

bool is_ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

}  // namespace

bool is_plain_name(const std::string& s, std::size_t max_len) {
  bool ok = !s.empty() && s.size() <= max_len && is_ascii_alnum(s[0]);
  for (char c : s) ok = ok && (is_ascii_alnum(c) || c == '-' || c == '_' || c == '.');
  return ok;
}

bool make_dirs(const std::string& dir, std::string* why) {
  if (dir.empty()) return true;
  std::string reason;
  UniqueFd fd = open_dir_path(dir, true, reason);
  if (!fd && why) *why = reason;
  return static_cast<bool>(fd);
}

std::string config_base(const UserFacts& user) {
  return !user.xdg_config_home.empty() ? user.xdg_config_home : user.home + "/.config";
}

std::map<std::string, std::string> environ_map(char* const* entries) {
  std::map<std::string, std::string> env;
  for (char* const* e = entries; e && *e; ++e) {
    std::string kv = *e;
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::string printable(const std::string& s, std::size_t max_len) {
  std::string out;
  for (unsigned char c : s) out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  return out.size() > max_len ? out.substr(0, max_len) + "..." : out;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

}  // namespace asbx

#include <stdexcept>
#include <sys/random.h>

namespace asbx {
std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t got = 0; got < n;) {
    ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r > 0) got += static_cast<std::size_t>(r);
    else if (errno != EINTR) throw std::runtime_error("getrandom failed");
  }
  return out;
}
}  // namespace asbx
