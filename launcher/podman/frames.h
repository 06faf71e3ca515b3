// Demultiplexer for podman's non-tty attach stream: frames of
// [stream, 0, 0, 0, length (uint32 big-endian)] + payload. 1 = stdout, 2 = stderr,
// 3 = an error from the server. Pure: bytes in, callbacks out; frames may be split anywhere.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace asbx {

class FrameDemuxer {
 public:
  using Sink = std::function<void(int stream, const char* data, std::size_t size)>;
  explicit FrameDemuxer(Sink sink) : sink_(std::move(sink)) {}
  void feed(const char* data, std::size_t size);
  // True when input ended inside a frame (a truncated stream).
  bool mid_frame() const { return header_have_ != 0 || remaining_ != 0; }

 private:
  Sink sink_;
  unsigned char header_[8] = {};
  std::size_t header_have_ = 0;
  std::uint32_t remaining_ = 0;
  int stream_ = 0;
};

}  // namespace asbx
