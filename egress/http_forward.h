// What the proxy forwards of a plain-HTTP request (RFC 9112), decided before a byte goes
// upstream: exactly one request per connection (the head says `connection: close`), its head
// regenerated from what was checked, its body framed by Content-Length or chunked and streamed
// through a framer that re-emits the chunk framing it validated. Anything after the body (a
// pipelined request, a smuggled one) is never forwarded. Pure, total (never throws), fuzzed
// (fuzz/http_request.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "egress/http_head.h"

namespace asbx {

struct BodyFraming {
  enum class Kind { none, length, chunked };
  Kind kind = Kind::none;
  std::uint64_t length = 0;  // Kind::length
};

struct ForwardPlan {
  std::optional<std::string> refusal;  // a refusal:: reason (egress/decision.h), else forwardable
  int status = 0;                      // the answer to the agent with a refusal: 400 or 501
  std::string why;                     // what exactly was wrong, for the answer and the stderr line
  BodyFraming framing;
  std::string head;                    // what goes upstream, when forwardable
};

// The checks a proxy must make of a request it forwards (RFC 9112 §3.2, §5, §6; RFC 9110
// §7.2): exactly one Host field (required in HTTP/1.1), naming the URI's authority; at most
// one Content-Length, a plain number; never Content-Length with Transfer-Encoding, nor
// Transfer-Encoding in HTTP/1.0; `chunked` the only transfer coding (501 for another).
// The forwarded head: origin-form request line, a Host generated from the URI, the agent's
// end-to-end fields (hop-by-hop ones and those its Connection field names dropped), the
// framing field, `connection: close`.
ForwardPlan plan_forward(const RequestHead& head, const Destination& dest);
// The framing checks alone (Content-Length / chunked, as above): a refusal, or nullopt with
// `framing` set. Inject mode (egress/inject.h) frames each keep-alive request with it.
std::optional<ForwardPlan> request_framing(const RequestHead& head, BodyFraming& framing);

// Streams one request body: feed() takes the agent's bytes as they come and appends what
// goes upstream to `out` (Content-Length: the bytes as they are; chunked: each chunk
// re-framed as "SIZE\r\n" data "\r\n", chunk extensions and trailer fields validated and
// dropped, "0\r\n\r\n" at the end). It consumes nothing past the body's end: what is left
// of `in` then belongs to a next request. Feeding in any pieces gives the same result.
class BodyFramer {
 public:
  enum class Status { more, done, bad };
  explicit BodyFramer(BodyFraming framing);
  std::size_t feed(std::string_view in, std::string& out);  // bytes consumed
  Status status() const { return status_; }
  const std::string& why() const { return why_; }

  static constexpr std::size_t kMaxLine = 4096;      // a chunk-size line, a trailer line
  static constexpr std::size_t kMaxTrailer = 16 * 1024;

 private:
  enum class State { size_line, data, data_end, trailer, finished };
  std::size_t feed_chunked(std::string_view in, std::string& out);
  std::size_t take_line(std::string_view in);
  void size_line_done(std::string& out);
  void trailer_line_done(std::string& out);
  void fail(const std::string& why);

  BodyFraming framing_;
  Status status_ = Status::more;
  std::string why_;
  State state_ = State::size_line;
  std::uint64_t left_ = 0;   // bytes of this chunk (or of the Content-Length body) still to come
  std::string line_;         // the line being read (size or trailer), CRLF not included
  bool line_complete_ = false;
  std::size_t crlf_seen_ = 0;  // bytes of the CRLF after a chunk's data
  std::size_t trailer_bytes_ = 0;
};

}  // namespace asbx
