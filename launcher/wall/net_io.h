// The wall's socket basics (launcher/wall/proxy.cc, forward.cc): waits bounded by a deadline and
// the proxy's stop pipe, whole sends, appending reads, connecting to the first address that answers,
// and the staged close of a refused connection.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/address.h"

namespace asbx {

std::int64_t now_ms();  // steady clock
int clamp_ms(std::int64_t ms);  // a poll timeout: 0 .. 60 s
// Waits for `events` on fd until `until` (steady ms); false on timeout, stop or error.
bool wait_for(int fd, short events, int stop_fd, std::int64_t until);
bool send_all(int fd, std::string_view data, int stop_fd, std::int64_t until);
// Appends what arrives before `until`; false on EOF, error, timeout or stop.
bool read_more(int fd, std::string& buf, int stop_fd, std::int64_t until);
void no_delay(int fd);
// The first address that accepts a connection, or -1.
int connect_any(const std::vector<IpAddress>& addresses, int port, int stop_fd);
// Half-close, drop what comes for a moment and a few KiB at most, close (RFC 9112 §9.6).
void close_lingering(int fd, int stop_fd);
// Never waits: what the socket takes of `answer` now, what the agent sent already read and
// dropped (so the close is a FIN, not a reset that could lose the answer), then close.
void close_at_once(int fd, std::string_view answer);

}  // namespace asbx
