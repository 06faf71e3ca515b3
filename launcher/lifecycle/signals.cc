#include "launcher/lifecycle/signals.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

namespace asbx {
namespace {

int g_pipe[2] = {-1, -1};
// SIGQUIT ends a session as SIGTERM does: by default it would end the launcher alone, its
// container running on and the caller's terminal left raw (a hostile pass).
const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH};
constexpr int kCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction g_old[kCount];
int g_users = 0;  // one pipe per process: what an outer pipe queued, an inner one reads

void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  (void)!::write(g_pipe[1], &b, 1);
  errno = saved;
}

}  // namespace

SignalPipe::SignalPipe() {
  if (g_users++ > 0) return;
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < kCount; ++i) ::sigaction(kSignals[i], &sa, &g_old[i]);
  ::signal(SIGPIPE, SIG_IGN);
}

SignalPipe::~SignalPipe() {
  if (--g_users > 0) return;
  for (int i = 0; i < kCount; ++i) ::sigaction(kSignals[i], &g_old[i], nullptr);
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

int SignalPipe::fd() const { return g_pipe[0]; }

int SignalPipe::next() {
  unsigned char b = 0;
  return ::read(g_pipe[0], &b, 1) == 1 ? b : 0;
}

}  // namespace asbx
