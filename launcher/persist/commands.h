// `agent-sandbox attach ID`, `agent-sandbox stop ID` on this seat, and what `ps` asks a persistent
// session. The session is found by its attach socket in this user's runtime dir
// (<runtime_dir>/<id>/attach.sock): another user's session is not reachable from here.
#pragma once
#include <string>

namespace asbx {

int attach_main(const std::string& program, const std::string& id);
// Ends the session with the usual record (SIGTERM to its supervisor: cause "signal"); prints
// "stopped ID (exit N)" and returns 0, or a launcher code.
int stop_main(const std::string& program, const std::string& id);
// For ps: "attached", "detached", or "?" when the session's supervisor cannot be asked.
std::string attach_state(const std::string& runtime_dir, const std::string& id);
std::string attach_socket_path(const std::string& runtime_dir, const std::string& id);

}  // namespace asbx
