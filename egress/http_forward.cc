#include "egress/http_forward.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

#include "egress/decision.h"

namespace asbx {
namespace {

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The elements of every field named `name` (a comma-separated list, RFC 9110 §5.6.1), empty
// elements ignored, lowercased.
std::vector<std::string> list_of(const RequestHead& head, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [n, value] : head.headers) {
    if (n != name) continue;
    std::string_view rest = value;
    while (true) {
      auto comma = rest.find(',');
      std::string_view item = trim(rest.substr(0, comma));
      if (!item.empty()) out.push_back(lower(item));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return out;
}

std::vector<std::string> values_of(const RequestHead& head, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& [n, value] : head.headers)
    if (n == name) out.push_back(value);
  return out;
}

ForwardPlan refused(const char* reason, int status, const std::string& why) {
  ForwardPlan p;
  p.refusal = reason;
  p.status = status;
  p.why = why;
  return p;
}

std::optional<ForwardPlan> check_host(const RequestHead& head, const Destination& dest) {
  std::vector<std::string> hosts = values_of(head, "host");
  if (hosts.size() > 1)
    return refused(refusal::host_repeated, 400, std::to_string(hosts.size()) + " Host fields (one is allowed)");
  if (hosts.empty() && head.version == "HTTP/1.1")
    return refused(refusal::host_missing, 400, "an HTTP/1.1 request without a Host field");
  if (hosts.size() == 1 && (hosts[0].empty() || check_host_field(head, dest)))
    return refused(refusal::host_mismatch, 400, "the Host field does not name the URI's authority");
  return std::nullopt;
}

// RFC 9112 §6.1–6.3: Transfer-Encoding (chunked only) or one Content-Length, never both.
std::optional<ForwardPlan> check_framing(const RequestHead& head, BodyFraming& framing) {
  std::vector<std::string> lengths = values_of(head, "content-length");
  bool has_te = !values_of(head, "transfer-encoding").empty();
  if (has_te && head.version == "HTTP/1.0")
    return refused(refusal::bad_framing, 400, "Transfer-Encoding in an HTTP/1.0 request");
  if (has_te && !lengths.empty()) return refused(refusal::bad_framing, 400, "both Content-Length and Transfer-Encoding");
  if (has_te) {
    std::vector<std::string> codings = list_of(head, "transfer-encoding");
    for (const auto& c : codings)
      if (c != "chunked") return refused(refusal::unsupported_coding, 501, "a transfer coding other than chunked");
    if (codings.size() != 1) return refused(refusal::bad_framing, 400, "chunked must be the one transfer coding, once");
    framing.kind = BodyFraming::Kind::chunked;
    return std::nullopt;
  }
  if (lengths.empty()) return std::nullopt;
  if (lengths.size() > 1) return refused(refusal::bad_framing, 400, std::to_string(lengths.size()) + " Content-Length fields");
  const std::string& v = lengths[0];
  if (v.empty() || v.size() > 15 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return refused(refusal::bad_framing, 400, "Content-Length is not a decimal length");
  framing.kind = BodyFraming::Kind::length;
  framing.length = std::stoull(v);
  return std::nullopt;
}

std::string authority_of(const Destination& dest) {
  return dest.port == 80 ? dest.host : dest.host + ":" + std::to_string(dest.port);
}

std::string forwarded_head(const RequestHead& head, const Destination& dest, const BodyFraming& framing) {
  static const char* const hop[] = {"connection", "keep-alive", "proxy-connection", "proxy-authorization",
                                    "proxy-authenticate", "te", "trailer", "upgrade",
                                    "host", "content-length", "transfer-encoding"};  // the last three: generated
  std::vector<std::string> named = list_of(head, "connection");
  std::string out = head.method + " " + dest.path + " " + head.version + "\r\nhost: " + authority_of(dest) + "\r\n";
  for (const auto& [name, value] : head.headers) {
    if (std::find(std::begin(hop), std::end(hop), name) != std::end(hop)) continue;
    if (std::find(named.begin(), named.end(), name) != named.end()) continue;
    out += name + ": " + value + "\r\n";
  }
  if (framing.kind == BodyFraming::Kind::chunked) out += "transfer-encoding: chunked\r\n";
  if (framing.kind == BodyFraming::Kind::length) out += "content-length: " + std::to_string(framing.length) + "\r\n";
  return out + "connection: close\r\n\r\n";
}

// chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ) (RFC 9112 §7.1.1).
bool valid_chunk_ext(std::string_view ext) {
  ext = trim(ext);
  while (!ext.empty()) {
    if (ext.front() != ';') return false;
    ext = trim(ext.substr(1));
    std::size_t n = 0;
    while (n < ext.size() && is_token_char(ext[n])) ++n;
    if (n == 0) return false;
    ext = trim(ext.substr(n));
    if (ext.empty() || ext.front() != '=') continue;
    ext = trim(ext.substr(1));
    if (!ext.empty() && ext.front() == '"') {
      std::size_t i = 1;
      for (; i < ext.size() && ext[i] != '"'; ++i)
        if (ext[i] == '\\') ++i;
      if (i >= ext.size()) return false;
      ext = trim(ext.substr(i + 1));
    } else {
      n = 0;
      while (n < ext.size() && is_token_char(ext[n])) ++n;
      if (n == 0) return false;
      ext = trim(ext.substr(n));
    }
  }
  return true;
}

bool valid_field_line(std::string_view line) {
  auto colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) return false;
  std::string_view value = line.substr(colon + 1);
  return std::none_of(value.begin(), value.end(), [](char c) { return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f; });
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ForwardPlan plan_forward(const RequestHead& head, const Destination& dest) {
  if (head.status != RequestHead::Status::ok || !dest.ok || !dest.plain_http)
    return refused(refusal::bad_request, 400, "not a plain-HTTP proxy request");
  if (auto no = check_host(head, dest)) return *no;
  ForwardPlan p;
  if (auto no = check_framing(head, p.framing)) return *no;
  p.head = forwarded_head(head, dest, p.framing);
  // The generated fields (host, framing, connection) can push a head at the limits past them:
  // what the proxy would refuse to read, it does not send (found by fuzz/http_request.cc).
  std::size_t fields = static_cast<std::size_t>(std::count(p.head.begin(), p.head.end(), '\n')) - 2;
  if (p.head.size() > kMaxRequestHead || fields > kMaxRequestFields)
    return refused(refusal::bad_request, 400, "the request head is too large to forward");
  return p;
}

BodyFramer::BodyFramer(BodyFraming framing) : framing_(framing), left_(framing.length) {
  if (framing.kind == BodyFraming::Kind::none || (framing.kind == BodyFraming::Kind::length && framing.length == 0))
    status_ = Status::done;
}

std::size_t BodyFramer::feed(std::string_view in, std::string& out) {
  if (status_ != Status::more) return 0;
  if (framing_.kind != BodyFraming::Kind::length) return feed_chunked(in, out);
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left_, in.size()));
  out.append(in.data(), n);
  left_ -= n;
  if (left_ == 0) status_ = Status::done;
  return n;
}

std::size_t BodyFramer::feed_chunked(std::string_view in, std::string& out) {
  std::size_t used = 0;
  while (used < in.size() && status_ == Status::more) {
    std::string_view rest = in.substr(used);
    if (state_ == State::size_line || state_ == State::trailer) {
      used += take_line(rest);
      if (status_ != Status::more || !line_complete_) continue;
      line_complete_ = false;
      if (state_ == State::size_line) size_line_done(out);
      else trailer_line_done(out);
      line_.clear();
    } else if (state_ == State::data) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left_, rest.size()));
      out.append(rest.data(), n);
      used += n;
      left_ -= n;
      if (left_ == 0) state_ = State::data_end, crlf_seen_ = 0;
    } else if (state_ == State::data_end) {
      if (rest[0] != (crlf_seen_ == 0 ? '\r' : '\n')) return fail("chunk data not followed by CRLF"), used;
      ++used;
      if (++crlf_seen_ == 2) out += "\r\n", state_ = State::size_line;
    }
  }
  return used;
}

// Up to and including the next LF, into line_ (without its CRLF); line_complete_ once it ended.
std::size_t BodyFramer::take_line(std::string_view in) {
  auto nl = in.find('\n');
  std::size_t take = nl == std::string_view::npos ? in.size() : nl + 1;
  std::string_view piece = in.substr(0, nl == std::string_view::npos ? in.size() : nl);
  if (line_.size() + piece.size() > kMaxLine) return fail("a chunked-body line longer than 4 KiB"), take;
  line_.append(piece.data(), piece.size());
  if (state_ == State::trailer && (trailer_bytes_ += take) > kMaxTrailer) return fail("trailer section longer than 16 KiB"), take;
  if (nl == std::string_view::npos) return take;
  if (line_.empty() || line_.back() != '\r') return fail("bare LF in the chunked body"), take;
  line_.pop_back();
  if (line_.find('\r') != std::string::npos) return fail("bare CR in the chunked body"), take;
  line_complete_ = true;
  return take;
}

void BodyFramer::size_line_done(std::string& out) {
  std::size_t i = 0, significant = 0;
  std::uint64_t size = 0;
  for (; i < line_.size() && hex_digit(line_[i]) >= 0; ++i) {
    if (size == 0 && line_[i] == '0') continue;
    if (++significant > 15) return fail("chunk size too large");
    size = size * 16 + static_cast<std::uint64_t>(hex_digit(line_[i]));
  }
  if (i == 0) return fail("chunk size is not hexadecimal");
  if (!valid_chunk_ext(std::string_view(line_).substr(i))) return fail("malformed chunk extension");
  if (size == 0) {
    state_ = State::trailer;
    return;
  }
  char hex[24];
  std::snprintf(hex, sizeof hex, "%llx\r\n", static_cast<unsigned long long>(size));
  out += hex;
  left_ = size;
  state_ = State::data;
}

void BodyFramer::trailer_line_done(std::string& out) {
  if (line_.empty()) {
    out += "0\r\n\r\n";
    status_ = Status::done;
    state_ = State::finished;
    return;
  }
  if (line_.front() == ' ' || line_.front() == '\t') return fail("folded trailer line");
  if (!valid_field_line(line_)) return fail("malformed trailer field");
}

void BodyFramer::fail(const std::string& why) {
  status_ = Status::bad;
  why_ = why;
}

}  // namespace asbx

namespace asbx {
std::optional<ForwardPlan> request_framing(const RequestHead& head, BodyFraming& framing) {
  return check_framing(head, framing);
}
}  // namespace asbx
