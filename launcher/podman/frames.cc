#include "launcher/podman/frames.h"

#include <algorithm>

namespace asbx {

void FrameDemuxer::feed(const char* data, std::size_t size) {
  while (size > 0) {
    if (remaining_ == 0) {
      std::size_t take = std::min(size, sizeof header_ - header_have_);
      std::copy(data, data + take, header_ + header_have_);
      header_have_ += take;
      data += take;
      size -= take;
      if (header_have_ < sizeof header_) return;
      stream_ = header_[0];
      remaining_ = (std::uint32_t(header_[4]) << 24) | (std::uint32_t(header_[5]) << 16) |
                   (std::uint32_t(header_[6]) << 8) | std::uint32_t(header_[7]);
      header_have_ = 0;
      continue;  // a zero-length frame carries nothing
    }
    std::size_t take = std::min<std::size_t>(size, remaining_);
    sink_(stream_, data, take);
    remaining_ -= static_cast<std::uint32_t>(take);
    data += take;
    size -= take;
  }
}

}  // namespace asbx
