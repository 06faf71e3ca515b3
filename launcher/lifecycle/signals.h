// Signals the launcher forwards (INT, TERM, HUP, QUIT) and SIGWINCH, delivered through a
// self-pipe so the stdio loop can poll for them. One pipe per process: a SignalPipe made while
// another lives shares it (a signal the outer one queued is read through the inner one), and the
// last one gone restores the handlers. Made on the main thread only.
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
