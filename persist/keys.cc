#include "persist/keys.h"

namespace asbx {

std::string DetachScanner::feed(const char* data, std::size_t size, bool& detach) {
  std::string out;
  detach = false;
  for (std::size_t i = 0; i < size; ++i) {
    char c = data[i];
    if (held_) {
      held_ = false;
      if (c == kDetachSecond) {
        detach = true;
        return out;
      }
      out += kDetachFirst;
    }
    if (c == kDetachFirst) held_ = true;
    else out += c;
  }
  return out;
}

}  // namespace asbx
