#include "plan/build_plan.h"
#include "launcher/lifecycle/local.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

#include "launcher/lifecycle/capture_log.h"
#include "launcher/podman/gc.h"
#include "launcher/podman/podman_socket.h"
#include "launcher/lifecycle/diagnostics.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/lifecycle/reexec.h"
#include "launcher/lifecycle/safe_files.h"
#include "launcher/lifecycle/session.h"
#include "launcher/lifecycle/slots.h"
#include "launcher/podman/spec.h"
#include "launcher/lifecycle/status.h"
#include "launcher/state/export.h"

namespace asbx {
namespace {

// Through the bounded diagnostics path (launcher/lifecycle/diagnostics.h): a caller that
// stopped reading stderr cannot hold the record or the removal.
void report(const LocalOptions& opts, const SessionResult& r) {
  for (const auto& w : r.warnings) say(opts.program + ": warning: " + w);
  if (r.outcome != "exited" && !r.message.empty()) say(opts.program + ": " + r.message);
}

std::string ledger_path(const Request& req, const SeatConfig& seat) {
  return req.ledger.empty() ? seat.ledger : req.ledger;
}

// --capture-log: the agent's stdout and stderr both go to LOG, streamed through the pump's
// fixed buffer (never held in memory). Created only after the plan is built, so a usage or
// config failure leaves no file and prints nothing on stdout (launcher/lifecycle/capture_log.h).
// sandbox-run --capture-stdout (a dispatched --capture-log): both streams go to this process's
// stdout, the ssh channel's stdout that the caller writes into its LOG; sandbox-run's own lines
// stay on stderr, so they never reach LOG.
StdioFds capture_stdio(const Request& req, UniqueFd& log) {
  if (req.capture_stdout) return StdioFds{0, 1, 1};
  if (req.capture_log.empty()) return StdioFds{};
  log = open_capture_log(req.capture_log);
  return StdioFds{0, log.get(), log.get()};
}

// Slots live beside the seat's ledger (its state dir); see slots.h.
std::string slot_dir(const SeatConfig& seat) { return seat.ledger.substr(0, seat.ledger.rfind('/')) + "/slots"; }

void claim_slot(const Request& req, const SeatConfig& seat, std::optional<SlotClaim>& claim) {
  if (req.slots <= 0) return;
  claim.emplace(slot_dir(seat), static_cast<int>(req.slots));
  std::fprintf(stderr, "%s\n", kSlotClaimedLine);
  std::fflush(stderr);
}

}  // namespace

SeatConfig current_seat_config() {
  UserFacts user = current_user_facts();
  return load_seat_config(default_seat_config_path(user), user);
}

int run_local(const Request& req, const LocalOptions& opts) {
  SeatConfig seat;
  LaunchPlan plan;
  StdioFds io;
  UniqueFd log;                    // --capture-log
  std::optional<SlotClaim> claim;  // held until this process exits
  try {
    seat = current_seat_config();
    claim_slot(req, seat, claim);
    plan = build_plan(req, seat, current_user_facts(), current_session_facts());
    if (!req.dry_run) ensure_podman_socket(plan.socket, current_user_facts());
    if (!req.dry_run) io = capture_stdio(req, log);
  } catch (const Error& e) {
    say(opts.program + ": " + e.what());
    if (!req.status_file.empty()) write_status_file(req.status_file, early_failure_record(req.id, e));
    flush_diagnostics();
    return e.exit_code();
  }
  if (req.dry_run) {
    std::cout << plan_json(plan).dump(2) << std::endl;
    return 0;
  }
  std::int64_t t_gc = steady_ms();
  gc_before_launch(plan.socket, seat.runtime_dir, seat.ledger);  // containers of SIGKILLed launchers go first (one list call)
  if (plan.state.export_area) remove_stale_exports(plan.state.dir, current_session_facts().now_unix, kStaleExportSeconds);
  t_gc = steady_ms() - t_gc;
  SessionResult result = run_session(plan, io);
  result.phase_ms.insert(result.phase_ms.begin(), {"gc", t_gc});
  result.warnings.insert(result.warnings.begin(), plan.credential_warnings.begin(), plan.credential_warnings.end());
  log = UniqueFd();  // closed before the record says the session ended
  report(opts, result);
  nlohmann::json record = status_record(plan, result);
  if (!req.capture_log.empty()) record["capture_log"] = req.capture_log;
  record["preflight"] = preflight_record();
  if (!req.status_file.empty()) write_status_file(req.status_file, record);
  append_ledger(ledger_path(req, seat), record);
  flush_diagnostics();  // the record is written: now the caller may have a moment
  return result.exit_code;
}

}  // namespace asbx
