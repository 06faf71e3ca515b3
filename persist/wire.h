// The attach socket's frames (docs/LIFECYCLE.md "Persistent sessions"): one byte of type, four of
// length (big-endian), then the payload. The supervisor and its clients (the first terminal,
// `attach`, `stop`, `ps`) speak nothing else. Total: a reader never throws, never holds more than
// one frame of at most kMaxFrame bytes, and a bad frame ends the connection.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asbx {

enum class FrameType : char {
  hello = 'H',     // client → supervisor, JSON {"op": "attach"|"stop"|"query", "rows": N, "cols": N}
  data = 'D',      // both ways: terminal bytes (input to the agent, its output to the terminal)
  winch = 'W',     // client → supervisor: rows, cols (2 bytes each, big-endian)
  status = 'S',    // supervisor → query: JSON {"attached": bool, "pid": N}
  exit = 'X',      // supervisor → client: JSON {"exit_code": N, "lines": [...]}: the session ended
  detached = 'G',  // supervisor → client: JSON {"why": ...}: another terminal took the session over
  refused = 'R',   // supervisor → client: JSON {"why": ...}: this peer may not attach
};

constexpr std::size_t kFrameHeader = 5;
constexpr std::size_t kMaxFrame = 1 << 20;

struct Frame {
  FrameType type;
  std::string payload;
};

std::string encode_frame(FrameType type, std::string_view payload);
std::string encode_winch(int rows, int cols);
// rows and cols from a winch payload; nullopt unless 4 bytes giving 1..65535 each.
std::optional<std::pair<int, int>> decode_winch(std::string_view payload);

class WireReader {
 public:
  void feed(const char* data, std::size_t size);
  // The next whole frame, or nullopt (need more bytes, or bad()).
  std::optional<Frame> next();
  bool bad() const { return bad_; }  // an unknown type or a length past kMaxFrame
  std::size_t buffered() const { return buf_.size() - off_; }

 private:
  std::string buf_;
  std::size_t off_ = 0;
  bool bad_ = false;
};

}  // namespace asbx
