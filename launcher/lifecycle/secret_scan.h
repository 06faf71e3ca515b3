// Inject mode's end-of-session check (docs/CREDENTIALS.md): the real token values must be
// nowhere the agent could have put them. Searched: the container's HOME (the pinned tmpfs), its
// writable layer (podman's upper dir, while the container still exists), its scratch tmpfs
// mounts (/tmp, /dev/shm: pinned before start, below), the workspace and git binds, and the
// environment the launcher gave it, what it printed (OutputScan); each value also in the encodings
// exposure_values() names. Nothing followed, every open non-blocking, bounded; a
// finding names a path, never the value.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/beneath.h"
#include "launcher/podman/container_root.h"

namespace asbx {

struct ScanBudget {
  std::int64_t files = 200'000;
  std::int64_t bytes = std::int64_t(2) << 30;  // 2 GiB read at most
  bool exhausted = false;  // the file or byte bound came first
  // Directories deeper than kMaxDepth below a searched root are not searched: named here (first 10).
  static constexpr int kMaxDepth = 64;
  std::vector<std::string> too_deep;
};

// Paths ("LABEL/relative", printable(): the agent chose the names) under `dir_fd` of regular
// files holding any of `values`, of symlinks whose target holds one (" (its link target)"), and
// of entries whose name holds one: that name is shown as "(a name holding the value)", here and in
// every path below it (a finding never carries the value).
std::vector<std::string> scan_tree(int dir_fd, const std::string& label, const std::vector<std::string>& values,
                                   ScanBudget& budget);
// A tmpfs of the container is gone when it stops. Opened through its root between init and
// start (nothing of the agent has run), a directory fd keeps each one readable for the scan.
// (container path, pinned fd); throws Error(internal) when one cannot be opened.
using ScratchPins = std::vector<std::pair<std::string, UniqueFd>>;
inline constexpr const char* kScratchDirs[] = {"/tmp", "/dev/shm"};
ScratchPins pin_scratch(const ContainerRoot& root);

// Every form credtable/placeholder.h exposure_forms() gives of each real value: what the scans
// look for.
std::vector<std::string> exposure_values(const std::vector<std::string>& reals);

// The agent's stdout and stderr as they pass to the caller (pump.h on_output): a real value the
// agent printed has reached the caller's terminal or log, and is a finding like a file holding it.
// Constant memory (the last longest−1 bytes of each stream); the first kMaxBytes are searched.
class OutputScan {
 public:
  static constexpr std::int64_t kMaxBytes = std::int64_t(1) << 30;
  void arm(std::vector<std::string> values);
  void feed(int stream, std::string_view bytes);
  std::vector<std::string> found() const;  // "(stdout)", "(stderr)"
  bool exhausted() const { return left_ < 0; }

 private:
  std::vector<std::string> values_;
  std::size_t keep_ = 0;
  std::string carry_[2];
  bool found_[2] = {false, false};
  std::int64_t left_ = kMaxBytes;
};

// True when any value occurs in `text` (pure; also used on the create body's env and argv).
bool holds_any(const std::string& text, const std::vector<std::string>& values);

}  // namespace asbx
