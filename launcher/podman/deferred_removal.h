// podman's cleanup off the caller's time: the container of a session whose exit code and
// record are complete is removed by a detached child of the launcher (docs/DECISIONS.md,
// "Issue 37: the wait for podman's cleanup").
//
// The child is the session's last process: it has its own session id (no terminal signal
// reaches it), holds no fd of the launcher's (not the caller's pipes, not the slot lock), and
// ends when podman has removed the container. While it lives, a marker in the seat's runtime
// dir (`.removal-<container id>`: its pid and start time) tells gc that the container's record
// is written and its removal under way; gc then leaves the container alone. When the child is
// killed before it removed the container, gc removes it on its next run without an orphan
// ledger line (the launcher's own line is already there) and drops the marker.
#pragma once
#include <cstdint>
#include <string>

namespace asbx {

std::string removal_marker_path(const std::string& runtime_dir, const std::string& container_id);

struct RemovalMarker {
  bool present = false;
  long pid = 0;
  std::int64_t started_unix = 0;
};
// The marker for `container_id`, strictly parsed ("PID START\n"); an odd one is not present.
RemovalMarker read_removal_marker(const std::string& runtime_dir, const std::string& container_id);
RemovalMarker parse_removal_marker(const std::string& text);  // pure: unit-tested

// The remover is this program again, run as `PROGRAM remove-deferred SOCKET ID MARKER` with `go` on
// fd 3 (cli.cc hands it to run_deferred_remover before any option is parsed): it waits for EOF on
// fd 3, then removes the container (3 more tries, 0.5, 1 and 2 s apart) and its marker. Throws
// Error(usage) when MARKER is not ID's marker (nothing removed); 1: not removed (the marker stays for gc).
inline constexpr const char* kRemoverVerb = "remove-deferred";
int run_deferred_remover(const std::string& socket, const std::string& id, const std::string& marker);

// Starts the detached remover. False (nothing started, no marker) when this process runs more
// than one thread (a fork would copy locks held elsewhere), the runtime dir cannot hold the
// marker, or fork fails: the caller then removes the container itself.
bool hand_off_removal(const std::string& socket, const std::string& runtime_dir, const std::string& container_id);

}  // namespace asbx
