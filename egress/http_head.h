// The smallest part of HTTP/1.x a CONNECT proxy needs: one request head (request line and
// header fields) from bytes the agent sent. Pure, total (never throws), fuzzable.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asbx {

struct RequestHead {
  enum class Status { incomplete, bad, ok };
  Status status = Status::incomplete;
  std::string why;  // for bad: what was wrong
  std::size_t length = 0;  // bytes of the head, final CRLF CRLF included
  std::string method;
  std::string target;   // as sent: authority (CONNECT) or absolute URI
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased, values trimmed
  std::string header(const std::string& lower_name) const;   // first value or ""
};

// Where the proxy should go: from a CONNECT authority or an http:// absolute URI.
struct Destination {
  bool ok = false;
  std::string why;
  std::string host;        // lowercase, brackets of an IPv6 literal kept
  int port = 0;
  bool plain_http = false;
  std::string path;        // origin-form for forwarding ("/" at least); "" for CONNECT
};

constexpr std::size_t kMaxRequestHead = 16 * 1024;
constexpr std::size_t kMaxRequestFields = 100;

// Parses the head at the start of `bytes`. Lines end in CRLF: a bare LF or a bare CR is bad
// (RFC 9112 §2.2 lets a recipient refuse them; a proxy that accepted what its upstream reads
// differently would let a request be smuggled), and so is a folded line (obs-fold, §5.2); at
// most kMaxRequestHead bytes and 100 fields; a head longer than that is bad, not incomplete.
RequestHead parse_request_head(std::string_view bytes);
Destination destination_of(const RequestHead& head);
// What of a plain-HTTP request is forwarded, and how: egress/http_forward.h.

}  // namespace asbx
