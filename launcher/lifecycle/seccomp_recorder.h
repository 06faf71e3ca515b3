// The session's seccomp recorder (docs/DECISIONS.md, issue 34): it holds the container's notify
// fd and answers every call the profile's recorded rows refuse, on its own thread: which row the
// call matched (seccomp/notify_match.h), the row's errno as the answer (never "continue": nothing
// is let through), a count (seccomp/refusal_tally.h: fixed counters), one stderr line at the
// first; with the seat's tripwire = "kill", `on_first` at the first, before it is answered.
// Fail closed: once the fd is closed (stop, or this process gone) the kernel answers every such
// call ENOSYS itself; a slow recorder only makes the caller wait.
// The fd may come from receive_notify_fd() just now or earlier (a warm container): adopt() takes it.
#pragma once
#include <functional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/plan.h"
#include "seccomp/refusal_tally.h"

namespace asbx {

class SeccompRecorder {
 public:
  SeccompRecorder() = default;
  SeccompRecorder(const SeccompRecorder&) = delete;
  SeccompRecorder& operator=(const SeccompRecorder&) = delete;
  ~SeccompRecorder() { stop(); }

  // Nothing for an empty fd. Throws Error(seccomp_unavailable) when the thread cannot start.
  void adopt(UniqueFd notify_fd, bool kill, std::function<void()> on_first);
  void stop();  // the thread ends and the fd closes; idempotent
  // The refused call that ended the session (kill mode), "" if none did. Read after stop().
  std::string killed_by() const { return killed_by_; }
  // The record's `seccomp` object: null without a profile; read after stop().
  nlohmann::json json(const LaunchPlan& plan) const;

 private:
  void run();
  void answer_one(std::string& request, std::string& response);

  UniqueFd notify_;
  UniqueFd stop_read_, stop_write_;
  bool kill_ = false;
  std::function<void()> on_first_;
  RefusalTally tally_;
  std::string killed_by_;
  std::thread thread_;
};

}  // namespace asbx
