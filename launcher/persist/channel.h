// The attach socket and the pty of a persistent session. The socket is a unix stream socket in
// the session's own dir (0700, the socket 0600): only the seat user who started the session
// reaches it, and the supervisor still checks every peer's uid (SO_PEERCRED, persist/screen.h).
#pragma once
#include <string>

#include "base/beneath.h"

namespace asbx {

// Binds and listens at `path` (non-blocking, close-on-exec), the socket file 0600. Error(internal).
UniqueFd listen_attach(const std::string& path);
// Connects to the session's socket; Error(attach_refused) saying why not (none there, another
// user's, its supervisor gone). `session` names it in the message.
UniqueFd connect_attach(const std::string& path, const std::string& session);
// 0 when something listens at `path`, else connect's errno (ENOENT: no socket, ECONNREFUSED: a
// socket nobody serves any more).
int connect_errno(const std::string& path);
// The uid of the peer of a connected unix socket, or -1.
long peer_uid(int fd);

// A pty pair for the supervisor: the session's terminal is the slave (the pump's stdin and
// stdout, exactly like a caller's terminal), the supervisor reads and writes the master. Both
// close-on-exec, neither ever the controlling terminal; the master non-blocking.
struct PtyPair {
  UniqueFd master;
  UniqueFd slave;
};
PtyPair open_pty(int rows, int cols);
void set_window(int master, int rows, int cols);

// Writes all of `data` to a socket, waiting at most `wait_ms` in total; false when it could not.
bool send_within(int fd, const std::string& data, int wait_ms);

}  // namespace asbx
