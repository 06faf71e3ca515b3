// The attach socket's frames (persist/wire.cc) and the detach-key scanner (persist/keys.cc) read
// bytes from the other end of a session's attach socket. Properties: the same bytes fed whole or
// cut into pieces give the same frames and the same bad() verdict; a frame re-encoded decodes to
// itself; the scanner forwards the same bytes however the input is cut, never more than it got
// (a ctrl-p is held back, never made up). The first byte picks the cuts.
#include <string>
#include <vector>

#include "fuzz/fuzz.h"
#include "persist/keys.h"
#include "persist/wire.h"

namespace {

struct Read {
  std::vector<std::pair<char, std::string>> frames;
  bool bad = false;
};

Read read_all(const std::string& in, unsigned seed) {
  asbx::WireReader reader;
  Read r;
  unsigned state = seed * 2654435761u + 1;
  for (std::size_t at = 0; at < in.size();) {
    state = state * 1103515245u + 12345u;
    std::size_t take = seed == 0 ? in.size() : std::min<std::size_t>(in.size() - at, 1 + (state >> 16) % 13);
    reader.feed(in.data() + at, take);
    at += take;
    while (auto f = reader.next()) r.frames.emplace_back(static_cast<char>(f->type), f->payload);
    if (reader.buffered() > asbx::kMaxFrame + asbx::kFrameHeader + 13) asbx::fuzz::violated("reader holds more than a frame");
  }
  r.bad = reader.bad();
  return r;
}

std::string scan(const std::string& in, unsigned seed, bool& detached) {
  asbx::DetachScanner keys;
  std::string out;
  detached = false;
  unsigned state = seed + 7;
  for (std::size_t at = 0; at < in.size() && !detached;) {
    state = state * 1103515245u + 12345u;
    std::size_t take = std::min<std::size_t>(in.size() - at, 1 + (state >> 16) % 5);
    out += keys.feed(in.data() + at, take, detached);
    at += take;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string in = asbx::fuzz::text(data + 1, size - 1);
  Read whole = read_all(in, 0), pieces = read_all(in, data[0] | 1);
  if (whole.frames != pieces.frames || whole.bad != pieces.bad) asbx::fuzz::violated("frames depend on the cuts");
  for (const auto& [type, payload] : whole.frames) {
    Read again = read_all(asbx::encode_frame(static_cast<asbx::FrameType>(type), payload), 0);
    if (again.bad || again.frames.size() != 1 || again.frames[0].second != payload) asbx::fuzz::violated("re-encoding changed a frame");
  }
  bool d1 = false, d2 = false;
  std::string a = scan(in, 0, d1), b = scan(in, data[0], d2);
  if (d1 != d2 || a != b) asbx::fuzz::violated("detach depends on the cuts");
  if (a.size() > in.size()) asbx::fuzz::violated("the scanner made up bytes");
  return 0;
}
