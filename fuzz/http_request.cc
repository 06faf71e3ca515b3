// The plain-HTTP forwarder's checks (egress/http_forward.cc) on a request the agent sent: the
// head, then its body through the framer. Properties: a forwardable request's head, as sent
// upstream, parses again as one request with exactly one Host (the URI's authority), framing
// fields only as decided, no proxy credentials, `connection: close`, CRLF only; the framer
// consumes nothing past the body, gives the same bytes however the input is split, and what it
// emits is framed canonically (framing it again changes nothing).
#include <algorithm>

#include "egress/decision.h"
#include "egress/http_forward.h"
#include "egress/http_head.h"
#include "fuzz/fuzz.h"

namespace {

using asbx::BodyFramer;
using asbx::fuzz::violated;

struct Framed {
  std::size_t used = 0;
  std::string out;
  BodyFramer::Status status = BodyFramer::Status::more;
};

Framed frame(const asbx::BodyFraming& f, std::string_view in, std::size_t piece) {
  BodyFramer framer(f);
  Framed r;
  while (r.used < in.size() && framer.status() == BodyFramer::Status::more) {
    std::size_t n = framer.feed(in.substr(r.used, piece), r.out);
    if (n == 0 && framer.status() == BodyFramer::Status::more) violated("framer consumed nothing");
    r.used += n;
  }
  r.status = framer.status();
  return r;
}

void check_head(const asbx::ForwardPlan& p, const asbx::Destination& d) {
  asbx::RequestHead again = asbx::parse_request_head(p.head);
  if (again.status != asbx::RequestHead::Status::ok || again.length != p.head.size()) violated("forwarded head does not parse");
  int hosts = 0, lengths = 0, codings = 0;
  for (const auto& [name, value] : again.headers) {
    hosts += name == "host";
    lengths += name == "content-length";
    codings += name == "transfer-encoding";
    if (name == "proxy-authorization") violated("proxy credentials forwarded");
  }
  std::string authority = d.port == 80 ? d.host : d.host + ":" + std::to_string(d.port);
  if (hosts != 1 || again.header("host") != authority) violated("forwarded Host: " + again.header("host"));
  if (lengths != (p.framing.kind == asbx::BodyFraming::Kind::length)) violated("content-length fields");
  if (codings != (p.framing.kind == asbx::BodyFraming::Kind::chunked)) violated("transfer-encoding fields");
  if (again.header("connection") != "close") violated("not connection: close");
}

void check_body(const asbx::BodyFraming& f, std::string_view rest) {
  Framed whole = frame(f, rest, rest.size() + 1), bytewise = frame(f, rest, 1);
  if (whole.used != bytewise.used || whole.out != bytewise.out || whole.status != bytewise.status)
    violated("the framer depends on how the input is split");
  if (whole.used > rest.size()) violated("consumed past the input");
  if (f.kind == asbx::BodyFraming::Kind::length && whole.out != rest.substr(0, whole.used)) violated("length body changed");
  if (whole.status != BodyFramer::Status::done) return;
  Framed again = frame(f, whole.out, whole.out.size() + 1);
  if (again.status != BodyFramer::Status::done || again.used != whole.out.size() || again.out != whole.out)
    violated("the framing it emits is not canonical");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = asbx::fuzz::text(data, size);
  asbx::RequestHead head = asbx::parse_request_head(bytes);
  if (head.status != asbx::RequestHead::Status::ok) return 0;
  asbx::Destination d = asbx::destination_of(head);
  asbx::ForwardPlan p = asbx::plan_forward(head, d);
  if (p.refusal) {
    if (p.status != 400 && p.status != 501) violated("refusal status");
    return 0;
  }
  if (!d.ok || !d.plain_http) violated("forwarding what is not a plain-HTTP request");
  check_head(p, d);
  check_body(p.framing, std::string_view(bytes).substr(head.length));
  return 0;
}
