#include "launcher/remote/remote_state.h"

#include "base/error.h"
#include "launcher/state/frames.h"
#include "launcher/state/tree.h"

namespace asbx {

std::string state_export_command(const std::string& id, int wait_s) {
  return "sandbox-run state-export " + id + (wait_s > 0 ? " --wait " + std::to_string(wait_s) : "");
}

StateReport fetch_state(SshConnection& conn, const std::string& id, const StatePlan& plan, const nlohmann::json& seat_state,
                        int wait_s) {
  StateReport report = state_from_json(seat_state);
  report.collected = true;
  StateTree tree;
  std::string why = tree.create(plan.dir, id);
  report.dir = tree.final_path();
  if (!why.empty()) {
    report.error = why;
    return report;
  }
  std::string seat_error = report.error;
  report.error.clear();
  FrameReader reader(tree, plan.limits, report);
  int status = -1;
  try {  // the agent's exit code is already known: a failed fetch is the record's, never the exit's
    status = conn.stream(state_export_command(id, wait_s),
                         [&](const char* data, std::size_t size) { return reader.feed(data, size); });
  } catch (const Error& e) {
    report.error = std::string("cannot fetch the seat's state: ") + e.what();
  }
  if (report.error.empty() && !reader.complete())
    report.error = "the seat's state stream ended early (state-export exit status " + std::to_string(status) + ")";
  why = tree.finish();
  if (report.error.empty()) report.error = why;
  if (report.error.empty()) report.error = seat_error;
  return report;
}

}  // namespace asbx
