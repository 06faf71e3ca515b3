// A terminal attached to a persistent session: the first one (the launcher that started it) and
// every `agent-sandbox attach`. Raw mode while attached (restored on every path), window size as
// frames, ctrl-p ctrl-q detaches (persist/keys.h). Returns the agent's exit code when the session
// ends while attached, 0 on detach, 128+N when a signal made it detach (the session goes on).
#pragma once
#include <string>

#include "base/beneath.h"

namespace asbx {

// Throws Error(attach_refused) when the supervisor refuses this peer, Error(internal) when it went
// away without the session's result.
int attach_terminal(UniqueFd socket, const std::string& program, const std::string& session);

// `stop`: asks the supervisor to end the session and waits (at most `wait_ms`) for its exit frame;
// returns the session's exit code. Error(attach_refused) / Error(internal) as above.
int stop_session(UniqueFd socket, const std::string& session, int wait_ms);

// `ps`: whether a terminal is attached ("attached" / "detached"), or "" when it cannot be asked.
std::string query_attached(UniqueFd socket);

}  // namespace asbx
