// Signals the launcher forwards (INT, TERM, HUP) and SIGWINCH, delivered through a
// self-pipe so the stdio loop can poll for them.
#pragma once

namespace asbx {

class SignalPipe {
 public:
  SignalPipe();   // installs handlers; SIGPIPE is ignored
  ~SignalPipe();  // restores the previous handlers
  int fd() const;
  // Next pending signal number, or 0.
  int next();
};

}  // namespace asbx
