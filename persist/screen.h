// The agent's latest output, kept by the supervisor whether or not a terminal is attached, so an
// attach shows the current screen: the last kScreenBytes (64 KiB: several full redraws of a
// 50x200 TUI) are replayed to each new client. Bounded: older output is forgotten, never queued.
#pragma once
#include <cstddef>
#include <string>

namespace asbx {

constexpr std::size_t kScreenBytes = 64 * 1024;

class ScreenTail {
 public:
  explicit ScreenTail(std::size_t capacity = kScreenBytes) : cap_(capacity) {}
  void append(const char* data, std::size_t size);
  // What to replay: the kept bytes, from the first line start when the front was cut (a cut
  // escape sequence or half a line would otherwise come first).
  std::string replay() const;
  std::size_t size() const { return buf_.size(); }

 private:
  std::size_t cap_;
  std::string buf_;
  bool cut_ = false;
};

// Whether a peer of the attach socket (its uid from SO_PEERCRED) may use a session the seat user
// `owner` started: the owner, and root (who could read its memory anyway). Pure.
bool may_attach(unsigned peer_uid, unsigned owner_uid);

}  // namespace asbx
