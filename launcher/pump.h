// The stdio loop of a session: container output to our stdout/stderr (demultiplexed
// unless a tty), our stdin to the container until EOF, signals and deadlines handed to
// the session. Streams through a fixed buffer: output is never held in memory.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "launcher/attach.h"
#include "launcher/session.h"
#include "launcher/signals.h"

namespace asbx {

struct PumpHooks {
  std::function<void(int sig)> on_signal;        // INT, TERM or HUP arrived
  std::function<void()> on_winch;                 // terminal resized
  std::function<std::int64_t()> deadline;         // steady-clock ms, or -1 for none
  std::function<void()> on_deadline;              // the deadline passed
};

struct PumpResult {
  std::string first_stderr;  // the first bytes of stderr (for exec-failure detection)
  bool stream_truncated = false;
};

std::int64_t steady_ms();
PumpResult pump_stdio(AttachStream& attach, const StdioFds& io, bool tty, SignalPipe& signals, PumpHooks& hooks);

}  // namespace asbx
