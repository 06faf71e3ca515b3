#include "persist/wire.h"

namespace asbx {
namespace {

bool known_type(char c) {
  for (char t : {'H', 'D', 'W', 'S', 'X', 'G', 'R'})
    if (c == t) return true;
  return false;
}

std::uint32_t be32(const char* p) {
  auto b = [p](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

}  // namespace

std::string encode_frame(FrameType type, std::string_view payload) {
  std::string out(kFrameHeader, '\0');
  auto n = static_cast<std::uint32_t>(payload.size());
  out[0] = static_cast<char>(type);
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
  out.append(payload);
  return out;
}

std::string encode_winch(int rows, int cols) {
  std::string p(4, '\0');
  p[0] = static_cast<char>((rows >> 8) & 0xff), p[1] = static_cast<char>(rows & 0xff);
  p[2] = static_cast<char>((cols >> 8) & 0xff), p[3] = static_cast<char>(cols & 0xff);
  return encode_frame(FrameType::winch, p);
}

std::optional<std::pair<int, int>> decode_winch(std::string_view p) {
  if (p.size() != 4) return std::nullopt;
  auto u = [&p](int i) { return static_cast<int>(static_cast<unsigned char>(p[i])); };
  int rows = u(0) << 8 | u(1), cols = u(2) << 8 | u(3);
  if (rows == 0 || cols == 0) return std::nullopt;
  return std::make_pair(rows, cols);
}

void WireReader::feed(const char* data, std::size_t size) {
  if (bad_) return;
  if (off_ > 0 && off_ == buf_.size()) buf_.clear(), off_ = 0;
  buf_.append(data, size);
}

std::optional<Frame> WireReader::next() {
  if (bad_ || buffered() < kFrameHeader) return std::nullopt;
  const char* head = buf_.data() + off_;
  std::uint32_t size = be32(head + 1);
  if (!known_type(head[0]) || size > kMaxFrame) {
    bad_ = true;
    buf_.clear(), off_ = 0;
    return std::nullopt;
  }
  if (buffered() < kFrameHeader + size) return std::nullopt;
  Frame f{static_cast<FrameType>(head[0]), buf_.substr(off_ + kFrameHeader, size)};
  off_ += kFrameHeader + size;
  if (off_ == buf_.size()) buf_.clear(), off_ = 0;
  else if (off_ > kMaxFrame) buf_.erase(0, off_), off_ = 0;  // keep what is held to about one frame
  return f;
}

}  // namespace asbx
