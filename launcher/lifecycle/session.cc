#include "launcher/lifecycle/session.h"

#include <ctime>
#include <filesystem>
#include <optional>

#include "launcher/wall/tripwire.h"
#include "launcher/lifecycle/agent_deadlines.h"
#include "launcher/gitguard/guard.h"
#include "launcher/wall/wall.h"
#include "launcher/podman/attach.h"
#include "launcher/podman/cgroup_reap.h"
#include "launcher/podman/cgroup_monitor.h"
#include "launcher/podman/container_root.h"
#include "launcher/podman/create_lock.h"
#include "launcher/lifecycle/disk_watch.h"
#include "launcher/lifecycle/exit_code.h"
#include "launcher/lifecycle/exposure_scan.h"
#include "launcher/lifecycle/outcome.h"
#include "launcher/lifecycle/phase_clock.h"
#include "launcher/lifecycle/start_checks.h"
#include "launcher/podman/gofer.h"
#include "launcher/lifecycle/idmap_binds.h"
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/home.h"
#include "launcher/lifecycle/mount_access.h"
#include "launcher/podman/podman_api.h"
#include "launcher/podman/namesake.h"
#include "launcher/podman/sentry_log_fifo.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/lifecycle/seccomp_file.h"
#include "launcher/lifecycle/seccomp_listener.h"
#include "launcher/lifecycle/seccomp_recorder.h"
#include "launcher/lifecycle/secret_scan.h"
#include "launcher/podman/service_loss.h"
#include "launcher/podman/spec.h"
#include "launcher/lifecycle/state_collect.h"
#include "launcher/lifecycle/terminal.h"
#include "base/util.h"
#include "launcher/pool/warm_bind.h"
#include "launcher/pool/warm_limits.h"

namespace asbx {
namespace {

const long kCreateLockWaitMs = 60 * 1000;
const int kSandboxBootWaitMs = 2000;  // runsc logs its configuration before anything else

class Session {
 public:
  Session(const LaunchPlan& plan, const StdioFds& io, bool defer, WarmMember* warm, const std::function<void()>& before_attach)
      : plan_(plan), io_(io), api_(plan.socket), warm_(warm), before_attach_(before_attach), defer_(defer) {}

  SessionResult run() {
    std::int64_t t0 = steady_ms();
    result_.started_unix = static_cast<std::int64_t>(std::time(nullptr));
    try {
      prepare();
      execute(t0);
    } catch (const Error& e) {
      record_error(result_, lost_service(e));
    } catch (const std::exception& e) {
      record_error(result_, Error(ErrorKind::internal, e.what()));
    }
    cleanup();
    collect_state_once();  // an ending that threw after start: the HOME fd still pins the tmpfs
    // Every ending after start, the container gone (nothing of the agent runs any more):
    // what it left in the workspace and the git dirs is swept and scanned (gitguard/guard.h).
    if (started_ && !plan_.git.shape.empty()) timed("git", [&] { git_.conclude(plan_, result_); });
    note_sweep_incomplete(result_);
    seat_tmpfs_.release();  // its last readers were the launcher's pinned fds; a staging left is detached too
    if (warm_) warm_binds_.finish(*warm_, result_.container_removed && result_.removal.empty());
    result_.total_ms = steady_ms() - t0;
    return result_;
  }

 private:
  void prepare() {
    if (warm_) {  // made and initialised ahead of time; its keeper handed over runc's listener (launcher/pool/take.h)
      result_.container_id = warm_->id;  // claimed: whatever fails from here, cleanup() removes it
      result_.path = "warm";
      result_.phase_ms.emplace_back("claim", warm_->claim_ms);
      listener_.adopt(std::move(warm_->listener), warm_->session_dir + "/seccomp.sock");
    }
    git_.pin(plan_);  // the validated dirs by fd, before anything exists
    disk_.check_floor(plan_);  // below the seat's disk floor nothing is created (232)
    UniqueFd sentry_log;
    if (!warm_) make_container(sentry_log);
    nlohmann::json state = timed("inspect", [&] { return warm_ ? warm_->inspected.get() : api_.inspect(result_.container_id); });
    if (warm_) timed("bind", [&] { warm_binds_.bind(plan_, *warm_, state); });
    long pid = state.is_object() && state.contains("State") ? state["State"].value("Pid", 0L) : 0L;
    init_.hold(pid);  // runc handed the notify fd during init: from here the recorder answers each refused call
    bool kill = plan_.tripwire.mode == TripwireMode::kill;
    recorder_.adopt(listener_.take(pid), kill, [this] { init_.kill(); });
    recorder_.adopt_sentry_log(std::move(sentry_log), kill, [this] { init_.kill(); }, plan_.socket, plan_.isolation.oci_runtime);
    if (plan_.seccomp.sentry_log) check_sandbox_boot(plan_, recorder_.sentry_boot(kSandboxBootWaitMs));
    exit_.arm(state, result_.container_id);
    watch_cgroup(pid);
    if (warm_) apply_limits();
    timed("checks", [&] { before_start(pid, state); });
    // The baseline of what the session may add, and the watcher (launcher/lifecycle/disk_watch.h).
    timed("disk_baseline", [&] { disk_.arm(monitor_.location().freezer, monitor_.location().version, [this] { init_.kill(); }); });
    if (before_attach_) before_attach_();
  }

  // The cold path: the container made and initialised for this session.
  void make_container(UniqueFd& sentry_log) {
    if (!timed("image", [&] { return api_.image_exists(plan_.image); }))
      throw Error(ErrorKind::image_missing, "image '" + plan_.image + "' is not present on the seat (podman at " +
                                                plan_.socket + "); build it with scripts/build-image.sh");
    seat_tmpfs_.mount(plan_);  // gVisor: HOME and the git tmpfs on the seat, bound in (seat_tmpfs.h)
    idmap_.stage(plan_);       // user_namespace = "range": each bind as an idmapped clone (idmap_binds.h)
    Created c = timed("create", [&] { return create(); });
    result_.container_id = c.id;
    result_.warnings = c.warnings;
    check_limits_enforced(result_, plan_);
    if (plan_.seccomp.sentry_log) sentry_log = open_sentry_log_fifo(api_.inspect(c.id));  // before init opens it
    timed("init", [&] { api_.init(c.id); });
    idmap_.detach();  // the container holds its own copies now
  }

  // A member made with the seat's limits gets the session's before anything runs (warm_limits.h).
  void apply_limits() {
    nlohmann::json want = create_body(plan_)["resource_limits"];
    std::int64_t t0 = steady_ms();
    if (apply_warm_limits(api_, result_.container_id, want, warm_->resources, monitor_.location()))
      result_.phase_ms.emplace_back("limits", steady_ms() - t0);
  }

  // Rootless creates of one user take turns (launcher/podman/create_lock.h: libsubid is not thread-safe).
  Created create() {
    std::optional<CreateLock> turn;
    if (plan_.rootless) turn.emplace(std::filesystem::path(plan_.session_dir).parent_path().string(), kCreateLockWaitMs);
    listener_.bind(plan_);                 // the recorder's socket the profile names (runc connects at init)
    SeccompProfileForCreate profile(plan_.seccomp);  // where the create body names it; podman reads it at create
    return create_after_namesake(api_, create_body(plan_), std::filesystem::path(plan_.session_dir).parent_path().string());
  }

  // After init the container's cgroup and first process exist: read the counters while it lives (podman deletes it before /wait returns).
  void watch_cgroup(long pid) {
    std::string why = pid > 0 ? monitor_.start(pid, result_.container_id) : "podman reported no process for the initialised container";
    if (!why.empty()) result_.warnings.push_back("no kill attribution for this session: " + why);
  }

  // Between init and start nothing of the agent has run: the container's root is
  // complete and still exactly what the launcher made. Everything decided here comes
  // from it, never from what the agent could write or print later.
  void before_start(long pid, const nlohmann::json& state) {
    if (pid <= 0) throw Error(ErrorKind::start_failed, "podman reported no process for the initialised container");
    // gVisor: the sandbox's own root is empty; its gofer serves the container's (gofer.h).
    ContainerRoot root(plan_.isolation.wall == "gvisor" ? runsc_gofer_pid(pid, result_.container_id) : pid);
    verify_mounts(root, plan_);
    check_command(root, state, plan_);
    check_mounts_usable(root, plan_);  // the agent's user can reach and write its workspace and git
    home_.stage(root, plan_);
    if (!home_.swaps().empty()) scratch_ = pin_scratch(root);  // inject mode: for the secret scan
    git_.stage(root, plan_);  // a plain clone's HEAD, index, packed-refs into its tmpfs gitdir
    // The door into the container's own namespace (docs/EGRESS.md); in inject mode the session CA
    // and the placeholders' real values, which only the wall holds.
    egress_.open(pid, plan_, root, home_.swaps());
    output_scan_.arm(exposure_values(egress_.real_values()));  // inject mode: what the agent prints
    // The catch-all device and the decoys; in kill mode the first trip stops the agent at once.
    tripwire_.arm(pid, plan_, home_.fd(), [this](const std::string&) { init_.kill(); });
  }

  void execute(std::int64_t t0) {
    std::int64_t t_attach = steady_ms();
    AttachStream attach(plan_.socket, result_.container_id);
    result_.phase_ms.emplace_back("attach", steady_ms() - t_attach);
    TerminalGuard term(plan_.tty, io_.in);
    if (plan_.tty) resize();
    timed("start", [&] { warm_ ? warm_binds_.go(*warm_) : api_.start(result_.container_id); });
    started_ = true;
    std::int64_t started = steady_ms();
    result_.setup_ms = started - t0;
    deadlines_.start(started, plan_.timeout_ms);
    WarmRename rename(warm_, plan_);  // beside the agent, not before it; joined before anything after it
    PumpHooks hooks = pump_hooks();
    PumpResult pumped = timed("agent", [&] { return pump_stdio(attach, io_, plan_.tty, signals_, hooks); });
    rename.join(result_);
    if (init_.outlives(kStreamOutlivedMs))
      throw Error(ErrorKind::podman_unreachable,
                  "the attach stream from " + plan_.socket + " ended while the agent still ran");
    int code = timed("wait", [&] { return exit_.wait(api_, result_.container_id); });
    tripwire_.stop();  // before anything reads HOME back: the launcher's own reads are no trips
    recorder_.stop();
    result_.counters = monitor_.stop();
    disk_.stop();
    result_.run_ms = steady_ms() - started;
    home_.check_refresh(plan_, result_);
    collect_state_once();  // the agent has ended (exit, timeout, signal, OOM); its HOME is still there
    timed("secret_scan", [&] {
      scan_for_exposure(result_, plan_, api_, {output_scan_, home_.fd(), scratch_}, exposure_values(egress_.real_values()));
    });
    home_.close();
    note_output_bounds(result_, pumped, io_.out_max);
    timed("conclude", [&] { conclude(code); });
    note_credential_exposed(result_);
  }

  // See service_loss.h: the agent is stopped without the service, its removal waits for it.
  Error lost_service(const Error& e) {
    if (e.kind() != ErrorKind::podman_unreachable || result_.container_id.empty()) return e;
    service_lost_ = true;
    return service_lost(e, init_);
  }

  PumpHooks pump_hooks() {
    PumpHooks h;
    deadlines_.hook(h);
    h.on_winch = [this] { resize(); };
    h.on_output = [this](int stream, std::string_view bytes) { output_scan_.feed(stream, bytes); };
    return h;
  }

  void resize() {
    int rows = 0, cols = 0;
    if (window_size(io_.in, rows, cols)) api_.resize(result_.container_id, rows, cols);
  }

  void conclude(int code) {
    code = ExitCode::from_state(api_, result_.container_id, code);
    std::string trip = tripwire_.killed_by().empty() ? recorder_.killed_by() : tripwire_.killed_by();
    decide_outcome(result_, plan_, code, {trip, disk_.ended(), disk_.ended_message()});
  }

  // --state-dir: the runtime's state paths, read through the pinned HOME fd (docs/STATE.md).
  void collect_state_once() {
    if (!started_ || state_done_ || plan_.state.dir.empty() || home_.fd() < 0) return;
    state_done_ = true;
    result_.state = collect_session_state(plan_, home_.fd(), home_.staged_prints());
    if (!result_.state.error.empty()) result_.warnings.push_back("state: " + result_.state.error);
  }

  void cleanup() {
    tripwire_.stop();
    recorder_.stop();
    disk_.stop();  // (again) after a failure: the container is removed below, its files stay
    result_.disk = disk_.record();
    result_.tripwire = tripwire_.json(plan_);
    result_.seccomp = recorder_.json(plan_);
    result_.egress = egress_.close(plan_);
    note_injection(result_, egress_);
    if (result_.container_id.empty()) return;
    // The exit code came without podman's lock and nothing failed since: the caller is answered
    // first, a detached child removes the container (launcher/podman/deferred_removal.h).
    if (defer_ && exit_.from_file() && !service_lost_ && result_.outcome != "launcher_error" && plan_.isolation.wall != "gvisor") {
      result_.container_removed = true;
      result_.removal = "deferred";
      return;
    }
    result_.container_removed = timed("remove", [&] {
      // A running member's removal can race podman's own cleanup (a 500): tried again, as gc does.
      return service_lost_ ? remove_when_back(api_, result_.container_id, kServiceBackMs) : api_.remove_retrying(result_.container_id);
    });
    if (!result_.container_removed)
      result_.warnings.push_back("could not remove container " + result_.container_id + "; agent-sandbox gc will");
    if (plan_.isolation.wall == "gvisor") reap_after_removal(monitor_.location(), result_);  // cgroup_reap.h
  }

  template <class F>
  auto timed(const char* name, F&& step) -> decltype(step()) {
    return timed_phase(result_, name, std::forward<F>(step));
  }

  SignalPipe signals_;  // first: a signal during setup is queued, not fatal
  const LaunchPlan& plan_;
  StdioFds io_;
  PodmanApi api_;
  SessionResult result_;
  CgroupMonitor monitor_;
  SessionHome home_;
  SeatTmpfs seat_tmpfs_;  // gVisor: before create, released last (after the git check)
  IdmapBinds idmap_;      // user_namespace = "range": staged before create, detached after init
  WarmMember* warm_;      // the warm path's member (nullptr: cold)
  std::function<void()> before_attach_;  // a warm claim's gc joined; the look again under the lock (local.cc)
  WarmBinds warm_binds_;  // the warm path: the workspace and the stub's spec, bound at claim
  ScratchPins scratch_;  // inject mode: /tmp and /dev/shm outlive the container for the secret scan
  GitGuard git_;
  EgressWall egress_;
  ContainerInit init_;  // stops the agent should the service die, or the tripwire trip in kill mode
  Tripwire tripwire_;
  SeccompListener listener_;  // the session dir's socket, bound before create (seccomp_listener.h)
  SeccompRecorder recorder_;  // answers and counts each refused call from init to the agent's end
  OutputScan output_scan_;  // inject mode: the agent's stdout/stderr searched for the real values
  DiskWatch disk_;
  ExitCode exit_;  // conmon's exit file, else podman's wait
  AgentDeadlines deadlines_{api_, result_, plan_.grace_ms};  // --timeout, a signal's grace, the kill
  bool defer_, service_lost_ = false, started_ = false, state_done_ = false;
};

}  // namespace

SessionResult run_session(const LaunchPlan& plan, const StdioFds& io, bool defer_removal, WarmMember* warm,
                          const std::function<void()>& before_attach) {
  return Session(plan, io, defer_removal, warm, before_attach).run();
}

}  // namespace asbx
