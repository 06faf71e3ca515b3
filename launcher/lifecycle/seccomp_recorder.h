// The session's seccomp recorder (docs/DECISIONS.md, issue 34): it holds the container's notify
// fd and answers every call the profile's recorded rows refuse, on its own thread: which row the
// call matched (seccomp/notify_match.h), the row's errno as the answer (never "continue": nothing
// is let through), a count (seccomp/refusal_tally.h: fixed counters), one stderr line at the
// first; with the seat's tripwire = "kill", `on_first` at the first, before it is answered.
// Fail closed: once the fd is closed (stop, or this process gone) the kernel answers every such
// call ENOSYS itself; a slow recorder only makes the caller wait.
// The fd may come from receive_notify_fd() just now or earlier (a warm container): adopt() takes it.
// gVisor: no notify fd exists; adopt_sentry_log() reads the sentry's log instead (seccomp/sentry_log.h):
// the sentry has refused each call already, the recorder only counts (a slow reader makes the
// sentry's log writes wait, never a call pass).
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/plan.h"
#include "seccomp/refusal_tally.h"
#include "seccomp/sentry_log.h"

namespace asbx {

class SeccompRecorder {
 public:
  SeccompRecorder() = default;
  SeccompRecorder(const SeccompRecorder&) = delete;
  SeccompRecorder& operator=(const SeccompRecorder&) = delete;
  ~SeccompRecorder() { stop(); }

  // Nothing for an empty fd. Throws Error(seccomp_unavailable) when the thread cannot start.
  void adopt(UniqueFd notify_fd, bool kill, std::function<void()> on_first);
  // gVisor: the read end of the sentry's log (launcher/podman/sentry_log_fifo.h), after init. Nothing
  // for an empty fd. Throws Error(seccomp_unavailable) when the log has no first line within 2 s
  // (the service at `socket` ran another runtime than the seat's wrapper `runtime`) or the thread
  // cannot start.
  void adopt_sentry_log(UniqueFd log_fd, bool kill, std::function<void()> on_first, const std::string& socket,
                        const std::string& runtime);
  void stop();  // the thread ends and the fd closes; idempotent
  // gVisor: what the boot said of itself (platform, network), waiting for it at most `wait_ms`
  // after adopt_sentry_log; empty fields for what it has not said by then.
  SentryBoot sentry_boot(int wait_ms) const;
  // The refused call that ended the session (kill mode), "" if none did. Read after stop().
  std::string killed_by() const { return killed_by_; }
  // The record's `seccomp` object: null without a profile; read after stop().
  nlohmann::json json(const LaunchPlan& plan) const;

 private:
  void start_thread();
  void run();
  void answer_one(std::string& request, std::string& response);
  void count(const RefusedCall& call);  // the first is said (and in kill mode, on_first_)
  int read_log();                       // 1: read, 0: the log's end (no writer left), -1: nothing there now

  UniqueFd notify_;
  UniqueFd log_;
  SentryLog sentry_;
  std::atomic<bool> heard_{false};
  SentryBoot boot_;  // written once by the thread before boot_known_ (release), read after it (acquire)
  std::atomic<bool> boot_known_{false};
  UniqueFd stop_read_, stop_write_;
  bool kill_ = false;
  std::function<void()> on_first_;
  RefusalTally tally_;
  std::string killed_by_;
  std::thread thread_;
};

}  // namespace asbx
