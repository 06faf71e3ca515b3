#include "launcher/lifecycle/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

namespace asbx {

TerminalGuard::TerminalGuard(bool on, int fd) : fd_(fd) {
  active_ = on && ::isatty(fd) && ::tcgetattr(fd, &saved_) == 0;
  if (!active_) return;
  termios raw = saved_;
  ::cfmakeraw(&raw);
  ::tcsetattr(fd, TCSANOW, &raw);
}

TerminalGuard::~TerminalGuard() {
  if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
}

bool window_size(int fd, int& rows, int& cols) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0) return false;
  rows = ws.ws_row;
  cols = ws.ws_col;
  return true;
}

}  // namespace asbx
