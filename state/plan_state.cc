#include "state/plan_state.h"

#include <filesystem>
#include <sys/stat.h>

#include "base/error.h"
#include "state/rules.h"

namespace asbx {
namespace {

// DIR from the flag, else from the seat config; "" when neither. `source` names it for errors.
std::string chosen_dir(const Request& req, const SeatConfig& seat, std::string& source) {
  if (!req.state_dir.empty()) {
    source = "--state-dir";
    return req.state_dir;
  }
  source = "[state] dir in " + seat.path;
  return seat.state_dir;
}

// "" when nothing is to be collected; else DIR made absolute, checked free for the id.
std::string checked_dir(const Request& req, const SeatConfig& seat, const std::string& runtime, const std::string& id) {
  std::string source;
  std::string dir = chosen_dir(req, seat, source);
  if (dir.empty()) return "";
  if (runtime.empty()) {
    if (!req.state_dir.empty())
      throw Error(ErrorKind::usage, "--state-dir needs --runtime NAME (the runtime's row declares which state to keep)");
    return "";  // the seat's default applies only to sessions of a runtime
  }
  dir = std::filesystem::absolute(dir).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (state_tree_exists(dir, id)) throw Error(ErrorKind::usage, source + ": '" + dir + "/" + id + "' already exists");
  return dir;
}

}  // namespace

void plan_state(const Request& req, const SeatConfig& seat, LaunchPlan& plan) {
  plan.state.limits = seat.state_limits;
  if (req.state_export) {
    if (!req.state_dir.empty()) throw Error(ErrorKind::usage, "--state-dir and --state-export exclude each other");
    if (plan.runtime.empty()) throw Error(ErrorKind::usage, "--state-export needs --runtime NAME");
    plan.state.dir = state_export_area(seat);
    plan.state.export_area = true;
    if (state_tree_exists(plan.state.dir, plan.session_id))
      throw Error(ErrorKind::usage, "--state-export: the seat already holds state of session '" + plan.session_id +
                                        "' (" + plan.state.dir + ")");
    return;
  }
  plan.state.dir = checked_dir(req, seat, plan.runtime, plan.session_id);
}

StatePlan caller_state_plan(const Request& req, const SeatConfig& caller) {
  StatePlan state;
  state.limits = caller.state_limits;
  state.dir = checked_dir(req, caller, req.runtime, req.id);
  return state;
}

std::string state_export_area(const SeatConfig& seat) {
  return seat.ledger.substr(0, seat.ledger.rfind('/')) + "/state-export";
}

bool state_tree_exists(const std::string& dir, const std::string& id) {
  struct stat st{};
  return ::lstat((dir + "/" + id).c_str(), &st) == 0 || ::lstat((dir + "/" + state_partial_name(id)).c_str(), &st) == 0;
}

}  // namespace asbx
