// gVisor's refusals, read from the sentry's own log (docs/DECISIONS.md, issue 36, "Refused calls
// under gVisor"). runsc applies the profile itself (--oci-seccomp) and has no seccomp agent, but
// with --debug its sentry writes one line per refused call:
//   D1203 11:48:55.468988   10336 task_syscall.go:240] [   2:   2] Syscall 272: denied by seccomp
// (the call's number in the sentry's native table; its arguments are not logged). Pure: bytes in,
// the numbers of the refused calls out. The log also carries text the agent chose (file names the
// gofer walks): a line counts only when it has the exact shape above and the pid of the log's
// first line (the boot process, written before the agent ran); a line longer than kMaxLine is
// dropped whole. Nothing is kept but the line being read.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace asbx {

class SentryLog {
 public:
  static constexpr std::size_t kMaxLine = 4096;

  // Every complete line of `bytes` (with what an earlier call left): `on_refused(nr)` for each
  // refusal line of the boot's pid.
  void feed(std::string_view bytes, const std::function<void(long)>& on_refused);
  // The log's first complete line was read and has the shape above (the boot opened its log: the
  // wrapper named it). A first line of another shape: never heard, nothing counts.
  bool heard() const { return !pid_.empty() && pid_ != "?"; }

 private:
  void line(std::string_view l, const std::function<void(long)>& on_refused);

  std::string partial_;
  bool overlong_ = false;  // the current line passed kMaxLine: dropped up to its newline
  std::string pid_;        // the header's pid field of the first line
};

// The header's pid field ("10336") of a glog line "<L><mmdd> <hh:mm:ss.uuuuuu> <spaces><pid> <file:line>] …",
// "" when `line` has not that shape.
std::string sentry_log_pid(std::string_view line);
// The call number of a refusal line "… task_syscall.go:<n>] [<tid>:<tid>] Syscall <nr>: denied by seccomp"
// (D level), -1 for any other line.
long sentry_refused_call(std::string_view line);

}  // namespace asbx
