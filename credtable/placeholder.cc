#include "credtable/placeholder.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "credtable/lifetime.h"

namespace asbx {
namespace {

using nlohmann::json;

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::size_t kPrefixWindow = 16;

// n characters drawn from the first `alphabet` letters of kBase64Url (62: letters and digits).
std::string random_text(std::size_t n, std::size_t alphabet, const RandomBytes& random) {
  std::string bytes = random(n), out(n, 'A');
  for (std::size_t i = 0; i < n && i < bytes.size(); ++i)
    out[i] = kBase64Url[static_cast<unsigned char>(bytes[i]) % alphabet];
  return out;
}

std::size_t opaque_prefix(const std::string& real) {
  std::size_t window = std::min(real.size() > 0 ? real.size() - 1 : 0, kPrefixWindow), keep = 0;
  for (std::size_t i = 0; i < window; ++i)
    if (real[i] == '-' || real[i] == '_') keep = i + 1;
  return keep;
}

// The member at "a.b", nullptr when absent.
json* member(json& doc, const std::string& path) {
  json* at = &doc;
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '.');) {
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &(*at)[part];
  }
  return at;
}

}  // namespace

bool looks_like_jwt(const std::string& text) {
  auto a = text.find('.');
  if (a == std::string::npos || a == 0) return false;
  auto b = text.find('.', a + 1);
  if (b == std::string::npos || b == a + 1 || b + 1 >= text.size() || text.find('.', b + 1) != std::string::npos)
    return false;
  auto header = base64url_decode(text.substr(0, a));
  if (!header || !base64url_decode(text.substr(a + 1, b - a - 1))) return false;
  return json::parse(*header, nullptr, false).is_object();
}

std::string make_placeholder(const std::string& real, const RandomBytes& random) {
  std::string out;
  do {
    if (looks_like_jwt(real)) {
      std::size_t cut = real.rfind('.') + 1;
      out = real.substr(0, cut) + random_text(real.size() - cut, 64, random);
    } else {
      std::size_t keep = opaque_prefix(real);
      out = real.substr(0, keep) + random_text(real.size() - keep, 62, random);
    }
  } while (out == real && real.size() > 8);  // a collision is astronomically rare; never hand out the real one
  return out;
}

std::string base64url_encode(const std::string& bytes) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) out += kBase64Url[(buffer >> (bits -= 6)) & 63];
  }
  if (bits > 0) out += kBase64Url[(buffer << (6 - bits)) & 63];
  return out;
}

std::string restamp_exp(const std::string& jwt, std::int64_t exp_unix) {
  if (!looks_like_jwt(jwt)) return jwt;
  std::size_t a = jwt.find('.'), b = jwt.rfind('.');
  auto claims = base64url_decode(jwt.substr(a + 1, b - a - 1));
  if (!claims) return jwt;
  json doc = json::parse(*claims, nullptr, false);
  if (!doc.is_object() || !doc.contains("exp") || !doc["exp"].is_number_integer()) return jwt;
  // The top-level member: the first "exp" key whose replacement parses back to the new value.
  for (std::size_t at = claims->find("\"exp\""); at != std::string::npos; at = claims->find("\"exp\"", at + 1)) {
    std::size_t digits = claims->find_first_not_of(" \t\r\n:", at + 5);
    if (digits == std::string::npos || digits == at + 5 || claims->find(':', at + 5) >= digits) continue;
    std::size_t end = claims->find_first_not_of("0123456789", digits);
    if (end == std::string::npos || end == digits) continue;
    std::string next = claims->substr(0, digits) + std::to_string(exp_unix) + claims->substr(end);
    json check = json::parse(next, nullptr, false);
    if (check.is_object() && check.contains("exp") && check["exp"] == exp_unix)
      return jwt.substr(0, a + 1) + base64url_encode(next) + jwt.substr(b);
  }
  return jwt;
}

PlaceholderFile make_placeholder_file(const std::vector<std::string>& secret_paths, const std::string& bytes,
                                      const RandomBytes& random) {
  PlaceholderFile out;
  json doc = json::parse(bytes, nullptr, false);
  if (!doc.is_object()) return out.why = "not a JSON object", out;
  for (const auto& path : secret_paths) {
    json* at = member(doc, path);
    if (!at || at->is_null()) continue;
    if (!at->is_string() || at->get<std::string>().size() < 8) return out.why = "'" + path + "' is not a token string", out;
    std::string real = at->get<std::string>();
    std::string placeholder = make_placeholder(real, random);
    out.swaps.push_back({path, placeholder, real});
    *at = placeholder;
  }
  if (out.swaps.empty()) return out.why = "none of the row's secrets is in the file", out;
  out.recognised = true;
  out.text = doc.dump(2) + "\n";
  return out;
}

std::vector<std::string> exposure_forms(const std::string& real) {
  static const char* kHex[2] = {"0123456789abcdef", "0123456789ABCDEF"};
  std::vector<std::string> out = {real, std::string(real.rbegin(), real.rend())};
  for (const char* digits : kHex) {
    std::string hex;
    for (unsigned char c : real) hex += {digits[c >> 4], digits[c & 15]};
    out.push_back(hex);
  }
  for (std::size_t lead = 0; lead < 3; ++lead) {
    // `lead` bytes before the value: the first group mixes them in, a partial last group mixes
    // in what follows; the groups between are the value's alone.
    std::string encoded = base64url_encode(std::string(lead, '\0') + real);
    std::size_t from = lead ? 4 : 0, to = (lead + real.size()) / 3 * 4;
    if (to <= from + 8) continue;  // too short to name anything
    std::string url = encoded.substr(from, to - from), standard = url;
    std::replace(standard.begin(), standard.end(), '-', '+');
    std::replace(standard.begin(), standard.end(), '_', '/');
    out.push_back(url);
    if (standard != url) out.push_back(standard);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace asbx
