// Files the launcher writes at paths the caller named (status file, capture log, ledger),
// possibly in a directory the agent can write (its workspace). A root launcher must not
// be steered into writing elsewhere: nothing is opened through a symlink, a planted
// hardlink is never written into or truncated, and no existing file of someone else is
// touched. See docs/THREATS.md.
#pragma once
#include <string>
#include <sys/types.h>

namespace asbx {

// A new, empty regular file beside `path` under an unpredictable name (O_EXCL,
// O_NOFOLLOW); `tmp` receives its path. -1 and `why` on failure.
int create_beside(const std::string& path, mode_t mode, std::string& tmp, std::string& why);
// rename(tmp, path): replaces whatever name was at `path` (a planted symlink or hardlink
// loses its name; what it pointed at is untouched). Unlinks `tmp` on failure.
bool replace_with(const std::string& tmp, const std::string& path, std::string& why);
// `path` opened for appending (created 0600 when absent), only when it is a regular file
// with one link owned by the launcher's euid. -1 and `why` otherwise.
int open_append_owned(const std::string& path, std::string& why);

}  // namespace asbx
