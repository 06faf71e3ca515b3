#include "persist/screen.h"

namespace asbx {

void ScreenTail::append(const char* data, std::size_t size) {
  if (size >= cap_) {
    buf_.assign(data + (size - cap_), cap_);
    cut_ = true;
    return;
  }
  std::size_t over = buf_.size() + size > cap_ ? buf_.size() + size - cap_ : 0;
  if (over > 0) {
    buf_.erase(0, over);
    cut_ = true;
  }
  buf_.append(data, size);
}

std::string ScreenTail::replay() const {
  if (!cut_) return buf_;
  auto nl = buf_.find('\n');
  return nl == std::string::npos ? buf_ : buf_.substr(nl + 1);
}

bool may_attach(unsigned peer_uid, unsigned owner_uid) { return peer_uid == owner_uid || peer_uid == 0; }

}  // namespace asbx
