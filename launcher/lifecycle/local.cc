#include "plan/build_plan.h"
#include "launcher/lifecycle/signals.h"
#include "launcher/lifecycle/range_claim.h"
#include "plan/isolation.h"
#include "launcher/lifecycle/local.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

#include "launcher/lifecycle/capture_log.h"
#include "launcher/podman/deferred_removal.h"
#include "launcher/podman/gc.h"
#include "launcher/podman/podman_api.h"
#include "launcher/podman/podman_socket.h"
#include "launcher/lifecycle/diagnostics.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/persist/persist.h"
#include "launcher/lifecycle/reexec.h"
#include "launcher/lifecycle/safe_files.h"
#include "launcher/lifecycle/session.h"
#include "launcher/lifecycle/slots.h"
#include "launcher/podman/spec.h"
#include "launcher/lifecycle/status.h"
#include "launcher/state/export.h"
#include "base/units.h"
#include "launcher/pool/fill.h"
#include "launcher/pool/refill.h"
#include "launcher/pool/pool_gc.h"
#include "launcher/lifecycle/runtime_dir.h"
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/session_owner.h"
#include "plan/warm_fit.h"

namespace asbx {
namespace {

// The session\'s last lines for the caller\'s stderr (said through the bounded diagnostics path, or
// sent to the attached terminal of a persistent session).
std::vector<std::string> report_lines(const LocalOptions& opts, const SessionResult& r) {
  std::vector<std::string> lines;
  for (const auto& w : r.warnings) lines.push_back(opts.program + ": warning: " + w);
  if (r.outcome != "exited" && !r.message.empty()) lines.push_back(opts.program + ": " + r.message);
  return lines;
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
// LOG's fd is the session's to close (run_planned closes it before the record is written).
StdioFds capture_stdio(const Request& req) {
  std::int64_t bound = parse_size(req.capture_log_max, "--capture-log-max");
  if (req.capture_stdout) return StdioFds{0, 1, 1, bound};
  if (req.capture_log.empty()) return StdioFds{};
  int fd = open_capture_log(req.capture_log).release();
  return StdioFds{0, fd, fd, bound};
}

// Slots live beside the seat's ledger (its state dir); see slots.h.
std::string slot_dir(const SeatConfig& seat) { return seat.ledger.substr(0, seat.ledger.rfind('/')) + "/slots"; }

// A range session's plan, made again on the range it claimed (the first plan is range 0's); same id.
LaunchPlan plan_on_a_range(const Request& req, const SeatConfig& seat, SessionFacts& facts, const LaunchPlan& first,
                           std::optional<RangeClaim>& range) {
  facts.userns_slot = range.emplace().slot();
  if (facts.userns_slot == 0) return first;
  Request again = req;
  again.id = first.session_id;
  return build_plan(again, seat, current_user_facts(), facts);
}

// The warm path (docs/DECISIONS.md "Issue 37: the warm pool"): a member when the session fits and
// one is ready; the plan made again on the member's range (same id). nullopt and `why` otherwise.
std::optional<WarmMember> claim_warm(const Request& req, const SeatConfig& seat, SessionFacts& facts, LaunchPlan& plan,
                                     const ImageQuestion& asked, std::string& why) {
  WarmFit fit = warm_fit(plan, seat.pool_size, seat.pool_tty_size);
  if (!fit.warm) {
    why = seat.pool_size + seat.pool_tty_size > 0 ? fit.why : "";
    return std::nullopt;
  }
  if (::geteuid() != 0) {
    why = "the launcher is not root (it takes the member's listener from its keeper with pidfd_getfd)";
    return std::nullopt;
  }
  std::optional<WarmMember> member = take_member(plan, seat.runtime_dir, asked, why);
  if (!member || member->slot < 0 || plan.isolation.user_namespace != "range") return member;
  facts.userns_slot = member->slot;
  Request again = req;
  again.id = plan.session_id;
  plan = build_plan(again, seat, current_user_facts(), facts);
  return member;
}

// A session that may take a member: its image's id is asked of podman before the plan is made.
bool may_claim(const Request& req, const SeatConfig& seat) {
  return !req.dry_run && !req.persist && seat.pool_size + seat.pool_tty_size > 0 && ::geteuid() == 0;
}

void claim_slot(const Request& req, const SeatConfig& seat, std::optional<SlotClaim>& claim) {
  if (req.slots <= 0) return;
  claim.emplace(slot_dir(seat), static_cast<int>(req.slots));
  std::fprintf(stderr, "%s\n", kSlotClaimedLine);
  std::fflush(stderr);
}

// A launcher re-exec'd through systemd-run ends its unit when it exits, and systemd would kill a
// detached remover with it: there the launcher removes the container itself, as before.
bool defer_removal_allowed() { return !preflight_record().value("reexecd", false); }

// The record and the ledger line are written: the container goes without the caller waiting
// (launcher/podman/deferred_removal.h), or here when no remover could be started.
void finish_removal(const LaunchPlan& plan, const SeatConfig& seat, const SessionResult& result, const std::string& program) {
  if (result.removal != "deferred" || hand_off_removal(plan.socket, seat.runtime_dir, result.container_id)) return;
  PodmanApi api(plan.socket);
  if (!api.remove_retrying(result.container_id)) say(program + ": warning: could not remove container " + result.container_id + "; agent-sandbox gc will");
}

// A session dir whose owner, or a running member whose claim, names a launcher of this boot that is
// gone: a killed launcher's session may still run. Only the seat's files are read (well under a ms).
bool orphan_in_sight(const std::string& runtime_dir) {
  HostFacts host = current_host_facts();
  return dead_owner_under(runtime_dir, host.boot_id, host.launcher_alive) || dead_claim_under(runtime_dir, host.launcher_alive);
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
  std::optional<SlotClaim> claim;  // held until this process exits
  std::optional<RangeClaim> range;  // likewise (a persistent session's supervisor inherits it)
  std::optional<WarmMember> warm;
  std::string why_cold;
  std::optional<SignalPipe> queued;  // from the warm claim on (below)
  ImageQuestion asked;
  try {
    seat = current_seat_config();
    if (!req.dry_run) check_runtime_dir(seat);  // before anything is made in it
    claim_slot(req, seat, claim);  // may wait: the image's id is asked after it, beside the plan
    if (may_claim(req, seat)) asked = ask_image_id(seat.socket, req.image.value_or(seat.image));
    SessionFacts facts = current_session_facts();
    plan = build_plan(req, seat, current_user_facts(), facts);
    if (!req.dry_run) ensure_podman_socket(plan.socket, current_user_facts());
    if (!req.dry_run) io = capture_stdio(req);
    // From here a signal is queued, never fatal: the session reads it once the agent runs. Before,
    // nothing is made that needs undoing; a SIGTERM during a claim left the member claimed. Not for
    // --persist (never warm): its supervisor is forked, and must not share this process's pipe.
    if (!req.dry_run && !plan.persist) queued.emplace();
    // Last: nothing between a claim and the session may fail, or the member would be left claimed.
    if (!req.dry_run) warm = claim_warm(req, seat, facts, plan, asked, why_cold);
    if (!req.dry_run && !warm && plan.isolation.user_namespace == "range") plan = plan_on_a_range(req, seat, facts, plan, range);
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
  if (plan.persist) return run_persistent(req, seat, plan, opts);
  SessionEnd end = run_planned(req, seat, plan, io, opts, warm ? &*warm : nullptr, why_cold);
  for (const auto& line : end.lines) say(line);
  flush_diagnostics();  // the record is written: now the caller may have a moment
  return end.exit_code;
}

SessionEnd run_planned(const Request& req, const SeatConfig& seat, const LaunchPlan& plan, const StdioFds& io,
                       const LocalOptions& opts, WarmMember* warm, const std::string& why_cold) {
  std::int64_t t_gc = steady_ms();
  // containers of SIGKILLed launchers go first (one list call); a gVisor one through the runsc service.
  // A warm session's runs on a thread beside its binds and checks when the seat's own files show a
  // killed launcher's session still running (orphan_in_sight), and is joined before the agent starts:
  // that orphan may be in this workspace (its busy lock went with its launcher) (docs/THREATS.md). On
  // a "host" seat, where a cold orphan leaves no such file, it runs beside the session all the same.
  // Otherwise the refill's, right after the record, is this session's: one joined at the end waited
  // behind the last session's removal (docs/BENCHMARKS.md "The gc a warm session waited for").
  auto gc = [&] { gc_before_launch(plan.socket, seat.runtime_dir, seat.ledger, runsc_socket(seat)); };
  bool wait_gc = warm && (warm->orphan_in_sight || orphan_in_sight(seat.runtime_dir));
  bool gc_beside = warm && (wait_gc || plan.isolation.user_namespace != "range");
  std::future<void> beside = gc_beside ? std::async(std::launch::async, gc) : std::future<void>();
  if (!warm) gc();
  if (plan.state.export_area) remove_stale_exports(plan.state.dir, current_session_facts().now_unix, kStaleExportSeconds);
  t_gc = steady_ms() - t_gc;
  bool gc_late = false;
  auto join_gc = [&] {  // the time the agent waited for it is the warm session's "gc" phase
    std::int64_t t0 = steady_ms();
    if (wait_gc) beside.wait();
    // The workspace's lock is this session's by now (taken after the look above): a launcher of it
    // killed in between shows in the seat's files, and its orphan goes before the agent starts
    // (hostile pass, stop 59). A gc beside that may have listed before that kill is followed by one.
    if (orphan_in_sight(seat.runtime_dir)) {
      if (beside.valid()) beside.wait();
      gc();
      gc_late = true;
    }
    t_gc += steady_ms() - t0;
  };
  SessionResult result = run_session(plan, io, defer_removal_allowed(), warm, join_gc);
  if (beside.valid()) beside.wait();  // a session that ended before its start
  if (!warm) result.path_reason = why_cold;
  if (!warm || gc_beside || gc_late) result.phase_ms.insert(result.phase_ms.begin(), {"gc", t_gc});  // one it ran
  result.warnings.insert(result.warnings.begin(), plan.credential_warnings.begin(), plan.credential_warnings.end());
  if (io.out != 1 && io.out != io.in) ::close(io.out);  // LOG, closed before the record says the session ended
  nlohmann::json record = status_record(plan, result);
  if (!req.capture_log.empty()) record["capture_log"] = req.capture_log;
  if (io.out_max >= 0) record["capture_log_truncated_bytes"] = result.output_truncated;
  record["preflight"] = preflight_record();
  if (plan.persist) record["persist"] = true;
  if (!req.status_file.empty()) write_status_file(req.status_file, record);
  append_ledger(ledger_path(req, seat), record);
  finish_removal(plan, seat, result, opts.program);
  // The member it took, or the pool found empty, made again off the caller's time.
  if (warm || why_cold.rfind(kNoReadyMember, 0) == 0) spawn_refill(opts.program);
  return SessionEnd{result.exit_code, report_lines(opts, result)};
}

}  // namespace asbx
