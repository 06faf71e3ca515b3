// Collection into a fresh DIR/<id>/ (state/tree.h) from a directory fd: the pinned HOME of
// an ended session, or a tree of the seat's export area.
#pragma once
#include <string>
#include <vector>

#include "base/state_report.h"
#include "state/rules.h"
#include "launcher/state/tree.h"
#include "launcher/state/walk.h"

namespace asbx {

// Copies what the walk lets through into a StateTree, 0644 files and 0755 directories.
class TreeSink : public StateSink {
 public:
  explicit TreeSink(StateTree& tree) : tree_(tree) {}
  std::string dir(const std::string& relative) override { return tree_.make_dir(relative); }
  std::string file(const std::string& relative, int fd, std::int64_t size) override;

 private:
  StateTree& tree_;
};

// Walks `plan.paths` beneath `top_fd` into plan.dir/<id>. The report is collected even
// when the tree cannot be made (its error says why).
StateReport collect_state(int top_fd, const std::string& session_id, const StatePlan& plan,
                          const std::vector<CredentialPrint>& credentials);

}  // namespace asbx
