// What a client does with the terminal's bytes before they reach the agent: the detach sequence
// ctrl-p ctrl-q (podman's and docker's default) leaves the session running. A ctrl-p is held back
// until the next byte says what it was; ctrl-p followed by anything else passes both on.
#pragma once
#include <string>

namespace asbx {

constexpr char kDetachFirst = 0x10;   // ctrl-p
constexpr char kDetachSecond = 0x11;  // ctrl-q
constexpr const char* kDetachKeysText = "ctrl-p ctrl-q";

class DetachScanner {
 public:
  // The bytes to forward; `detach` is set when the sequence completed (what follows it is dropped).
  std::string feed(const char* data, std::size_t size, bool& detach);

 private:
  bool held_ = false;  // a ctrl-p was the last byte seen
};

}  // namespace asbx
