#include "launcher/state/collect.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace asbx {

std::string TreeSink::file(const std::string& relative, int fd, std::int64_t size) {
  std::string why;
  UniqueFd out = tree_.new_file(relative, why);
  if (!out) return why;
  why = copy_exactly(fd, out.get(), size);
  if (why.empty() && ::fchmod(out.get(), kStateFileMode) != 0) why = std::string("cannot set its mode: ") + std::strerror(errno);
  if (!why.empty()) tree_.remove_file(relative);
  return why;
}

StateReport collect_state(int top_fd, const std::string& session_id, const StatePlan& plan,
                          const std::vector<CredentialPrint>& credentials) {
  StateReport report;
  report.collected = true;
  StateTree tree;
  std::string why = tree.create(plan.dir, session_id);
  report.dir = tree.final_path();
  if (!why.empty()) {
    report.error = why;
    return report;
  }
  TreeSink sink(tree);
  walk_state(WalkInput{top_fd, plan.paths, plan.limits, credentials}, sink, report);
  why = tree.finish();
  if (!why.empty()) report.error = why;
  return report;
}

}  // namespace asbx
