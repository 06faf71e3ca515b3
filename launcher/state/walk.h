// The walk over what the agent left under its HOME (or over a seat's export area): each
// declared state path, depth first, names sorted, every rule of state/rules.h applied,
// nothing followed, every open non-blocking. What passes goes to a sink; what does not is
// named in the report with its reason.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/state_report.h"
#include "state/rules.h"

namespace asbx {

class StateSink {
 public:
  virtual ~StateSink() = default;
  // A directory at `relative` (its parent was given before). "" or why it failed.
  virtual std::string dir(const std::string& relative) = 0;
  // `size` bytes of the regular file open at `fd` (read with pread from offset 0).
  virtual std::string file(const std::string& relative, int fd, std::int64_t size) = 0;
};

// A staged credential, as a file that must not come back: its size and content digest.
struct CredentialPrint {
  std::int64_t size = 0;
  std::uint64_t digest = 0;
  bool operator==(const CredentialPrint&) const = default;
};

struct WalkInput {
  int top_fd = -1;                   // HOME (the pinned tmpfs) or a tree of the export area
  std::vector<std::string> paths;    // relative to top_fd; "" = top_fd itself
  StateLimits limits;
  std::vector<CredentialPrint> credentials;
};

// Names read in all (directories' entries) before the walk stops: bounds the work a tree
// of millions of entries can cause.
std::int64_t walk_budget(const StateLimits& limits);

void walk_state(const WalkInput& in, StateSink& sink, StateReport& report);

// Copies exactly `size` bytes from `from` (pread, offset 0) to `to`. "" or why.
std::string copy_exactly(int from, int to, std::int64_t size);

}  // namespace asbx
