// Persistent sessions through the registry (docs/REMOTE.md): `ps` asks every agent-seat
// (`sandbox-run ps --json`), `attach` and `stop` find the seat that runs the session that way and
// run the seat's `sandbox-run attach ID` (on a pty) or `sandbox-run stop ID` there. Only the seat
// user of the registry entry reaches a seat's sessions; the seat checks the rest.
#pragma once
#include <string>

#include "launcher/remote/remote.h"

namespace asbx {

int remote_ps_main(const RemoteOptions& opts, bool json);
int remote_attach_main(const RemoteOptions& opts, const std::string& id);
int remote_stop_main(const RemoteOptions& opts, const std::string& id);

}  // namespace asbx
