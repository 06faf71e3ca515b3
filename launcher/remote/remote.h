// Dispatch to a seat host over ssh: pick a seat from the registry, run the seat's
// sandbox-run there (the same code as local mode), relay stdio and the exit code, fetch
// the seat's status record over a second channel, write the caller's own records.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "launcher/remote/registry.h"
#include "base/request.h"

namespace asbx {

struct RemoteOptions {
  std::string registry;  // registry file ("" = the default path)
  std::string host;      // --host NAME ("" = first agent-seat with free capacity)
};

// True when the caller asked for dispatch, or the default registry file exists.
bool wants_remote(const RemoteOptions& opts, const UserFacts& user);
int run_remote(Request req, const RemoteOptions& opts);

// The seat's sandbox-run argv for a request (pure; the status path is added by the caller).
std::vector<std::string> seat_argv(const Request& req, std::int64_t slots);
// The whole remote command line: quoted argv, the status file under the seat's $XDG_RUNTIME_DIR.
std::string seat_command(const Request& req, std::int64_t slots);
std::string seat_status_path(const std::string& session_id);  // shell words, not quoted

class SshConnection;
// The seat's status record of a session that ended, taken off the seat; nullopt when there is none.
std::optional<nlohmann::json> fetch_seat_record(SshConnection& conn, const std::string& id);
// Where the caller's own ledger line goes: --ledger, else the caller's seat config default.
std::string caller_ledger(const Request& req, const UserFacts& user);

}  // namespace asbx
