#include "egress/sni.h"

#include <cstdint>

namespace asbx {
namespace {

using Status = SniResult::Status;

struct Reader {
  std::string_view b;
  std::size_t at = 0;
  bool ok = true;
  std::size_t left() const { return ok ? b.size() - at : 0; }
  std::uint32_t num(int n) {
    if (left() < static_cast<std::size_t>(n)) { ok = false; return 0; }
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(b[at++]);
    return v;
  }
  std::string_view take(std::size_t n) {
    if (left() < n) { ok = false; return {}; }
    auto out = b.substr(at, n);
    at += n;
    return out;
  }
};

SniResult result(Status s, std::string name = "") { return SniResult{s, std::move(name)}; }

// The server_name extension body: a list of (type, name); type 0 is host_name.
SniResult from_server_name(std::string_view ext) {
  Reader r{ext};
  Reader list{r.take(r.num(2))};
  while (r.ok && list.left() > 0) {
    std::uint32_t type = list.num(1);
    std::string_view name = list.take(list.num(2));
    if (!list.ok) break;
    if (type == 0 && !name.empty()) return result(Status::ok, std::string(name));
  }
  return result(Status::no_sni);
}

SniResult from_client_hello(std::string_view body) {
  Reader r{body};
  r.take(2 + 32);            // legacy_version, random
  r.take(r.num(1));          // session id
  r.take(r.num(2));          // cipher suites
  r.take(r.num(1));          // compression methods
  if (!r.ok) return result(Status::not_tls);
  if (r.left() == 0) return result(Status::no_sni);  // no extensions at all
  Reader exts{r.take(r.num(2))};
  if (!r.ok) return result(Status::not_tls);
  while (exts.left() > 0) {
    std::uint32_t type = exts.num(2);
    std::string_view ext = exts.take(exts.num(2));
    if (!exts.ok) return result(Status::not_tls);
    if (type == 0) return from_server_name(ext);
  }
  return result(Status::no_sni);
}

}  // namespace

SniResult client_hello_sni(std::string_view bytes) {
  constexpr std::size_t kMax = 64 * 1024;
  std::string handshake;
  Reader r{bytes};
  while (r.left() >= 5) {
    std::uint32_t type = r.num(1), major = r.num(1);
    r.num(1);  // minor: any 3.x
    std::uint32_t length = r.num(2);
    if (type != 22 || major != 3 || length == 0 || length > 16384 + 2048) return result(Status::not_tls);
    if (r.left() < length) return result(Status::incomplete);  // the rest of this record is on its way
    handshake += r.take(length);
    if (handshake.size() >= 4) {
      if (static_cast<std::uint8_t>(handshake[0]) != 1) return result(Status::not_tls);  // not a ClientHello
      Reader h{handshake};
      h.num(1);
      std::size_t body = h.num(3);
      if (body > kMax) return result(Status::not_tls);
      if (handshake.size() >= 4 + body) return from_client_hello(std::string_view(handshake).substr(4, body));
    }
    if (handshake.size() > kMax) return result(Status::not_tls);
  }
  if (r.left() >= 1 && static_cast<std::uint8_t>(bytes[r.at]) != 22) return result(Status::not_tls);
  return result(Status::incomplete);
}

}  // namespace asbx
