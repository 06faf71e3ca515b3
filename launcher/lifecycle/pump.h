// The stdio loop of a session: container output to our stdout/stderr (demultiplexed
// unless a tty), our stdin to the container until EOF, signals and deadlines handed to
// the session. Output is queued per destination up to a high-water mark, then the
// container is no longer read (backpressure), but signals and deadlines still fire: no
// write ever blocks the loop (launcher/lifecycle/output_sink.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "launcher/podman/attach.h"
#include "launcher/lifecycle/session.h"
#include "launcher/lifecycle/signals.h"

namespace asbx {

struct PumpHooks {
  std::function<void(int sig)> on_signal;        // INT, TERM or HUP arrived
  std::function<void()> on_winch;                 // terminal resized
  std::function<std::int64_t()> deadline;         // steady-clock ms, or -1 for none
  std::function<void()> on_deadline;              // the deadline passed
  std::function<bool()> keep_draining;            // after the container stopped: still deliver?
  std::function<bool()> ending;                   // a kill was sent: read on, drop what cannot go out
  std::function<void(int stream, std::string_view)> on_output;  // each piece of output (1, 2), as it arrives
};

struct PumpResult {
  std::int64_t output_dropped = 0;  // bytes never delivered: the caller stopped reading
  bool stream_truncated = false;
  std::int64_t output_truncated = 0;  // bytes past StdioFds::out_max (the capture log's bound)
};

std::int64_t steady_ms();
PumpResult pump_stdio(AttachStream& attach, const StdioFds& io, bool tty, SignalPipe& signals, PumpHooks& hooks);

}  // namespace asbx
