// The egress proxy's parsers of what the agent sends (egress/http_head.cc, egress/sni.cc): the
// request head and the TLS ClientHello. Both are total: never throw, never read past the input.
// Properties: an ok head has a length within the input and ending in a blank line; a destination
// that parsed has a port in 1..65535 and a host without spaces; a forwarded head ends in
// "connection: close"; a name found in a ClientHello is within the input.
#include "egress/decision.h"
#include "egress/http_forward.h"
#include "egress/http_head.h"
#include "egress/sni.h"
#include "fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  const std::string bytes = asbx::fuzz::text(data, size);
  asbx::RequestHead head = asbx::parse_request_head(bytes);
  if (head.status == asbx::RequestHead::Status::ok) {
    if (head.length == 0 || head.length > bytes.size() || head.length > asbx::kMaxRequestHead) violated("head length");
    if (bytes[head.length - 1] != '\n') violated("head does not end in a line end");
    asbx::Destination d = asbx::destination_of(head);
    if (d.ok) {
      if (d.port < 1 || d.port > 65535) violated("port out of range");
      if (d.host.empty() || d.host.find_first_of(" \r\n\t") != std::string::npos) violated("host: " + d.host);
      asbx::ForwardPlan plan = asbx::plan_forward(head, d);
      if (d.plain_http && !plan.refusal) {
        std::string fwd = plan.head;
        const std::string end = "\r\nconnection: close\r\n\r\n";
        if (fwd.size() < end.size() || fwd.compare(fwd.size() - end.size(), end.size(), end) != 0)
          violated("forwarded head end");
        if (fwd.find("\r\nproxy-authorization:") != std::string::npos) violated("proxy credentials forwarded");
      }
      (void)asbx::check_host_field(head, d);
    }
  } else if (head.status == asbx::RequestHead::Status::incomplete && bytes.size() >= asbx::kMaxRequestHead) {
    violated("incomplete past the limit");
  }
  asbx::SniResult sni = asbx::client_hello_sni(bytes);
  if (sni.status == asbx::SniResult::Status::ok && (sni.name.empty() || bytes.find(sni.name) == std::string::npos))
    violated("name not from the input");
  return 0;
}
