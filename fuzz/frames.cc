// The attach stream demultiplexer (launcher/podman/frames.cc) reads bytes a hostile container
// controls. Property: the same bytes fed whole or cut into arbitrary pieces give the same
// (stream, payload) sequence and the same mid_frame() verdict. The first byte picks the cuts.
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz.h"
#include "launcher/podman/frames.h"

namespace {

using Output = std::vector<std::pair<int, std::string>>;

// Consecutive payload of one stream is merged: where a frame boundary falls is not output.
struct Collector {
  Output out;
  asbx::FrameDemuxer demux{[this](int stream, const char* data, std::size_t size) {
    if (stream < 0 || stream > 255) asbx::fuzz::violated("stream id out of a byte's range");
    if (size == 0) asbx::fuzz::violated("empty payload delivered");
    if (out.empty() || out.back().first != stream) out.emplace_back(stream, "");
    out.back().second.append(data, size);
  }};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned seed = data[0];
  const std::string in = asbx::fuzz::text(data + 1, size - 1);
  Collector whole;
  whole.demux.feed(in.data(), in.size());
  Collector pieces;
  unsigned state = seed * 2654435761u + 1;
  for (std::size_t at = 0; at < in.size();) {
    state = state * 1103515245u + 12345u;
    std::size_t take = std::min<std::size_t>(in.size() - at, 1 + (state >> 16) % 13);
    pieces.demux.feed(in.data() + at, take);
    at += take;
  }
  if (whole.out != pieces.out) asbx::fuzz::violated("output depends on where the input was cut");
  if (whole.demux.mid_frame() != pieces.demux.mid_frame()) asbx::fuzz::violated("mid_frame depends on the cuts");
  std::size_t payload = 0;
  for (const auto& [stream, bytes] : whole.out) payload += bytes.size();
  if (payload > in.size()) asbx::fuzz::violated("more payload out than bytes in");
  return 0;
}
