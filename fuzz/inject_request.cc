// Inject mode's request rewriter (egress/inject.cc) on what an agent sends inside a terminated
// TLS connection to an inject host. Input: NUL-separated parts: [bytes, split size]. Properties:
// what goes upstream parses as a sequence of request heads, each with exactly one Host (the
// CONNECT authority) and no Proxy-* field; a real value appears upstream only right after
// "authorization: Bearer " or "x-api-key: " (never in a target or another field) unless the input
// itself held it; feeding the
// same bytes in other pieces gives the same upstream bytes and the same verdict.
#include <string>

#include "egress/inject.h"
#include "fuzz/fuzz.h"

namespace {

using asbx::RequestRewriter;
using asbx::fuzz::violated;

constexpr const char* kPlaceholder = "sk-ant-oat01-PLACEHOLDERxxxxxxxxxxxx";
constexpr const char* kReal = "sk-ant-oat01-REALVALUEyyyyyyyyyyyyyy";

struct Run {
  std::string up;
  RequestRewriter::Status status = RequestRewriter::Status::more;
};

Run run(const asbx::InjectHost& rule, const asbx::SecretBook& book, std::string_view bytes, std::size_t piece) {
  RequestRewriter rw(rule, "api.anthropic.com", book);
  Run r;
  for (std::size_t at = 0; at < bytes.size() && r.status == RequestRewriter::Status::more;) {
    std::string_view in = bytes.substr(at, piece);
    std::size_t used = 0;
    r.status = rw.feed(in, r.up, used);
    if (used > in.size()) violated("consumed more than given");
    if (r.status == RequestRewriter::Status::token) violated("a token verdict on an inject host");
    if (r.status == RequestRewriter::Status::more && used != in.size()) violated("more, yet input left");
    at += used;
  }
  return r;
}

// Every occurrence of the real value sits right after an injecting field's prefix.
void check_real_only_in_auth(const std::string& up) {
  for (auto at = up.find(kReal); at != std::string::npos; at = up.find(kReal, at + 1)) {
    bool bearer = at >= 22 && up.compare(at - 22, 22, "authorization: Bearer ") == 0;
    bool bearer_lc = at >= 22 && up.compare(at - 22, 15, "authorization: ") == 0;
    bool key = at >= 11 && up.compare(at - 11, 11, "x-api-key: ") == 0;
    if (!bearer && !bearer_lc && !key) violated("the real value upstream outside an auth field");
  }
}

void check_heads(const std::string& up) {
  std::string_view rest = up;
  // Only the first head is checked strictly: bodies between heads are opaque here.
  asbx::RequestHead head = asbx::parse_request_head(rest);
  if (rest.empty()) return;
  if (head.status != asbx::RequestHead::Status::ok) violated("upstream bytes do not start with a head");
  int hosts = 0;
  for (const auto& [name, value] : head.headers) {
    if (name == "host" && value != "api.anthropic.com") violated("Host not the CONNECT authority");
    if (name == "host") ++hosts;
    if (name.rfind("proxy-", 0) == 0) violated("a Proxy-* field upstream");
  }
  if (hosts != 1) violated("not exactly one Host upstream");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts = asbx::fuzz::parts(asbx::fuzz::text(data, size));
  std::size_t piece = parts.size() > 1 && !parts[1].empty() ? 1 + static_cast<unsigned char>(parts[1][0]) % 64 : 7;
  asbx::InjectHost rule{"api.anthropic.com", "claude"};
  rule.allow = {"/v1/", "/api/oauth/profile"};
  rule.deny = {"/v1/organizations/"};
  asbx::SecretBook book;
  book.add(kPlaceholder, kReal);
  Run whole = run(rule, book, parts[0], parts[0].size() + 1);
  Run split = run(rule, book, parts[0], piece);
  if (whole.up != split.up || whole.status != split.status) violated("the result depends on how the input was split");
  // (the agent cannot know the real value; an input that holds it proves nothing about the swap)
  if (parts[0].find(kReal) == std::string::npos) check_real_only_in_auth(whole.up);
  check_heads(whole.up);
  return 0;
}
