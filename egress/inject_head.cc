// Inject mode's request heads (egress/inject.h): what a request on an inject host may carry, and
// the head that goes upstream. Pure.
#include <algorithm>
#include <cctype>

#include "egress/inject.h"
#include "base/util.h"

namespace asbx {
namespace {

// RFC 9110 §7.6.1 and the fields a proxy consumes: never forwarded. Connection may name other
// fields as hop-by-hop; the wall honours none of that (it drops Connection itself and forwards
// the rest), so the agent cannot make it drop a field the upstream needs or keep one it strips.
bool hop_by_hop(const std::string& name) {
  for (const char* h : {"connection", "keep-alive", "te", "trailer", "proxy-connection"})
    if (name == h) return true;
  return starts_with(name, "proxy-");
}

}  // namespace

bool on_the_wire(const std::string& field) {
  std::string f = ascii_lower(field);
  std::string key = f.substr(f.rfind('.') == std::string::npos ? 0 : f.rfind('.') + 1);
  key.erase(std::remove(key.begin(), key.end(), '_'), key.end());
  return key == "accesstoken" || key == "openaiapikey" || key == "apikey";
}

std::optional<HeadRefusal> check_inject_head(const RequestHead& head) {
  int credentials = 0;
  for (const auto& [name, value] : head.headers) {
    if (name == "upgrade" && ascii_lower(value).find("websocket") != std::string::npos)
      return HeadRefusal{426, refusal::websocket_refused, "WebSocket is not offered here; use HTTPS"};
    if (name == "upgrade" || name == "http2-settings")
      return HeadRefusal{426, refusal::upgrade_refused, "no protocol upgrade on an inject host (HTTP/1.1 only)"};
    if (name == "authorization" || name == "x-api-key") ++credentials;
  }
  if (std::none_of(std::begin(kInjectMethods), std::end(kInjectMethods), [&](const char* m) { return head.method == m; }))
    return HeadRefusal{405, refusal::inject_method_refused, "only GET and POST are forwarded on an inject host"};
  if (credentials > 1)
    return HeadRefusal{400, refusal::credential_repeated, "more than one Authorization or x-api-key field"};
  return std::nullopt;
}

HeadRewrite rewrite_head(const RequestHead& head, const std::string& authority, const SecretBook& book) {
  HeadRewrite out;
  out.elsewhere += book.count_in(head.target);
  out.head = head.method + " " + head.target + " " + head.version + "\r\nhost: " + authority + "\r\n";
  for (const auto& [name, value] : head.headers) {
    if (name == "host" || hop_by_hop(name)) continue;
    std::string v = value;
    bool bearer = name == "authorization" && v.size() > 7 && ascii_lower(v.substr(0, 7)) == "bearer ";
    std::optional<std::string> real;
    if (out.swapped == 0 && bearer) real = book.real_of(v.substr(7));
    else if (out.swapped == 0 && name == "x-api-key") real = book.real_of(v);
    if (real) v = (bearer ? v.substr(0, 7) : "") + *real, out.swapped++;
    else out.elsewhere += book.count_in(v);
    out.head += name + ": " + v + "\r\n";
  }
  out.head += "\r\n";
  return out;
}

}  // namespace asbx
