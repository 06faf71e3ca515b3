// Runs the seat's sandbox-run on one ssh channel and pumps stdio: stdout and stderr
// kept apart, stdin until EOF (only after the seat claimed a slot), a pty and window
// size for --tty, the remote exit status returned exactly.
#pragma once
#include <string>

#include "launcher/lifecycle/session.h"
#include "launcher/lifecycle/signals.h"
#include "launcher/remote/ssh_session.h"

namespace asbx {

struct RemoteExit {
  int exit_status = -1;      // the remote command's exit status; -1 when none arrived
  bool claimed = false;      // the seat wrote its slot-claimed line
  std::string held;          // output held back before the claim line (dropped if the seat was full)
  int caller_signal = 0;     // INT/TERM/HUP that made us close the channel
  bool dropped = false;      // the connection failed mid-session
  std::string drop_reason;
};

// `gated`: the command is sandbox-run taking a slot (kSlotClaimedLine); stdin waits for the claim.
// Ungated (`sandbox-run attach`): everything flows at once.
RemoteExit ssh_exec(SshConnection& conn, const std::string& command, bool tty, const StdioFds& io,
                    SignalPipe& signals, bool gated = true);

}  // namespace asbx
