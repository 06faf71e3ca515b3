#include "egress/http_head.h"
#include "base/util.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace asbx {
namespace {

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char); }

// Visible ASCII only: a target carries no spaces, controls or 8-bit bytes.
bool is_visible(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

RequestHead bad(const std::string& why) {
  RequestHead h;
  h.status = RequestHead::Status::bad;
  h.why = why;
  return h;
}

bool parse_request_line(std::string_view line, RequestHead& h) {
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) return false;
  h.method = std::string(line.substr(0, sp1));
  h.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  h.version = std::string(line.substr(sp2 + 1));
  return is_token(h.method) && is_visible(h.target) && (h.version == "HTTP/1.1" || h.version == "HTTP/1.0");
}

bool parse_field(std::string_view line, RequestHead& h) {
  auto colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) return false;
  std::string value = trim(line.substr(colon + 1));
  if (std::any_of(value.begin(), value.end(), [](char c) { return (c < 0x20 && c != '\t') || c == 0x7f; })) return false;
  h.headers.emplace_back(ascii_lower(std::string(line.substr(0, colon))), value);
  return true;
}

std::optional<int> port_of(std::string_view text) {
  if (text.empty() || text.size() > 5 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int port = std::stoi(std::string(text));
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

// "host:port", "[v6]:port", or (default_port > 0) "host" alone.
bool split_authority(std::string_view auth, int default_port, Destination& d) {
  std::string_view host = auth, port;
  if (!auth.empty() && auth.front() == '[') {
    auto close = auth.find(']');
    if (close == std::string_view::npos) return false;
    host = auth.substr(0, close + 1);
    std::string_view after = auth.substr(close + 1);
    if (!after.empty() && after.front() != ':') return false;
    if (!after.empty()) port = after.substr(1);
  } else if (auto colon = auth.rfind(':'); colon != std::string_view::npos) {
    host = auth.substr(0, colon);
    port = auth.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return false;
  }
  if (host.empty() || host.find('@') != std::string_view::npos) return false;
  if (port.empty()) {
    if (default_port <= 0 || auth.back() == ':') return false;
    d.port = default_port;
  } else {
    auto p = port_of(port);
    if (!p) return false;
    d.port = *p;
  }
  d.host = ascii_lower(std::string(host));
  return true;
}

}  // namespace

std::string RequestHead::header(const std::string& lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return value;
  return "";
}

RequestHead parse_request_head(std::string_view bytes) {
  std::string_view window = bytes.substr(0, std::min(bytes.size(), kMaxRequestHead));
  RequestHead h;
  std::size_t at = 0;
  bool first = true;
  while (true) {
    auto nl = window.find('\n', at);
    if (nl == std::string_view::npos) {
      if (bytes.size() >= kMaxRequestHead) return bad("request head longer than 16 KiB");
      return h;  // incomplete
    }
    std::string_view line = window.substr(at, nl - at);
    if (line.empty() || line.back() != '\r') return bad("bare LF in the request head");
    line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return bad("bare CR in the request head");
    at = nl + 1;
    if (first) {
      if (!parse_request_line(line, h)) return bad("malformed request line");
      first = false;
      continue;
    }
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') return bad("folded header line");
    if (h.headers.size() >= kMaxRequestFields) return bad("more than 100 header fields");
    if (!parse_field(line, h)) return bad("malformed header field");
  }
  h.status = RequestHead::Status::ok;
  h.length = at;
  return h;
}

Destination destination_of(const RequestHead& head) {
  Destination d;
  if (head.status != RequestHead::Status::ok) {
    d.why = "malformed request";
    return d;
  }
  if (head.method == "CONNECT") {
    d.ok = split_authority(head.target, 0, d);
    if (!d.ok) d.why = "CONNECT needs HOST:PORT";
    return d;
  }
  if (ascii_lower(head.target.substr(0, 7)) != "http://") {
    d.why = head.target.rfind("https://", 0) == 0 ? "https:// goes through CONNECT" : "a proxy request needs an http:// URI or CONNECT";
    return d;
  }
  std::string rest = head.target.substr(7);
  auto slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  d.path = slash == std::string::npos ? "/" : rest.substr(slash);
  if (d.path.front() != '/') d.path = "/" + d.path;
  d.plain_http = true;
  d.ok = split_authority(authority, 80, d);
  if (!d.ok) d.why = "malformed http:// URI";
  return d;
}

}  // namespace asbx
