// The caller's terminal for --tty: raw mode while a session runs, restored on every exit
// path (destructor); the window size it reports. Shared by local and ssh sessions.
#pragma once
#include <termios.h>

namespace asbx {

class TerminalGuard {
 public:
  TerminalGuard(bool on, int fd);
  ~TerminalGuard();
  TerminalGuard(const TerminalGuard&) = delete;
  TerminalGuard& operator=(const TerminalGuard&) = delete;

 private:
  int fd_;
  bool active_ = false;
  termios saved_{};
};

// Rows and columns of the terminal on fd; false when fd is not a terminal.
bool window_size(int fd, int& rows, int& cols);

}  // namespace asbx
