// The directories the launcher writes in (the status file's, the ledger's, the capture log's,
// the state dir, the slot and lock dirs) may lie under a tree the agent can write: any
// component of such a path may have been swapped for a symlink. They are opened one component
// at a time from `/`, never following a symlink the agent could have made: a symlink is
// followed only when root owns it and it sits in a directory root owns that nobody else may
// write (`/var/run -> /run`, `/lib -> usr/lib`: the system's, never a session's; a rootful
// container's agent runs with no capability, a rootless one's root is the seat user).
// Everything else is refused, with the component named.
#pragma once
#include <string>
#include <sys/types.h>

#include "base/beneath.h"

namespace asbx {

// The directory at `path` (absolute, or relative to the physical working directory), as an
// O_PATH fd. With `create`, missing components are made 0700 (owned by the launcher's euid).
// An invalid fd and `why` naming the component otherwise, e.g.
// "'/ws/out' is a symlink (refused)".
UniqueFd open_dir_path(const std::string& path, bool create, std::string& why);

// `path` split at its last '/': its directory opened as above (made when `create`), and the
// last component in `name` ("" when the path ends in '/'). The directory of "name" is ".".
UniqueFd open_parent_dir(const std::string& path, bool create, std::string& name, std::string& why);

}  // namespace asbx
