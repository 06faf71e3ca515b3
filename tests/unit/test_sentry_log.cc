// gVisor's refusals read from the sentry's log (seccomp/sentry_log.h): only lines of the exact
// shape, of the boot's pid (the log's first line), count; a line the agent shaped through a file
// name the gofer logs, a line without the pid, an overlong line: nothing.
#include <doctest/doctest.h>

#include <string>
#include <sys/syscall.h>
#include <vector>

#include "seccomp/notify_match.h"
#include "seccomp/sentry_log.h"

using namespace asbx;

namespace {

const std::string kFirst = "I1203 11:48:55.341566   10336 main.go:216] ***************************\n";

std::string refusal(long nr, const std::string& pid = "10336") {
  return "D1203 11:48:55.468988   " + pid + " task_syscall.go:240] [   2:   2] Syscall " + std::to_string(nr) +
         ": denied by seccomp\n";
}

std::vector<long> feed_all(const std::vector<std::string>& chunks, SentryLog& log) {
  std::vector<long> got;
  for (const auto& c : chunks) log.feed(c, [&](long nr) { got.push_back(nr); });
  return got;
}

}  // namespace

TEST_CASE("sentry log: a refusal line's call number; every other shape is -1") {
  CHECK(sentry_refused_call(refusal(272).substr(0, refusal(272).size() - 1)) == 272);
  CHECK(sentry_refused_call("D1203 11:48:55.468988   10336 task_syscall.go:245] [   2:   2] Syscall 272: killed by seccomp") == -1);
  CHECK(sentry_refused_call("I1203 11:48:55.468988   10336 task_syscall.go:240] [   2:   2] Syscall 272: denied by seccomp") == -1);
  CHECK(sentry_refused_call("D1203 11:48:55.468988   10336 task_syscall.go:240] [   2:   2] Syscall 272: denied by seccomp!") == -1);
  CHECK(sentry_refused_call("D1203 11:48:55.468988   10336 client.go:400] [   2:   2] Syscall 272: denied by seccomp") == -1);
  CHECK(sentry_refused_call("D1203 11:48:55.468988   10336 task_syscall.go:388] vsyscall 96, caller 0: denied by seccomp") == -1);
  CHECK(sentry_refused_call("D1203 11:48:55 10336 task_syscall.go:240] [   2:   2] Syscall 272: denied by seccomp") == -1);
  CHECK(sentry_refused_call("D1203 11:48:55.468988   10336 task_syscall.go:240] [   2:   2] Syscall 1234567: denied by seccomp") == -1);
  CHECK(sentry_log_pid(kFirst.substr(0, kFirst.size() - 1)) == "10336");
  CHECK(sentry_log_pid("not a log line") == "");
}

TEST_CASE("sentry log: the boot's first line gives the pid; refusals of that pid count, in any chunking") {
  SentryLog log;
  CHECK_FALSE(log.heard());
  std::string all = kFirst + refusal(SYS_unshare) + refusal(SYS_keyctl) + refusal(SYS_unshare, "999");
  std::vector<std::string> bytes;
  for (char c : all) bytes.emplace_back(1, c);  // one byte at a time
  CHECK(feed_all(bytes, log) == std::vector<long>{SYS_unshare, SYS_keyctl});
  CHECK(log.heard());
}

TEST_CASE("sentry log: a line the agent shaped through a file name counts once it has the boot's pid only") {
  // The gofer client logs walked names as they are: a newline in a name starts a line of the agent's text.
  SentryLog log;
  std::string forged_other_pid = "D1203 11:48:55.455518   10336 client.go:400] send WalkReq{Path: [x\n" + refusal(SYS_bpf, "1") + ", ]}\n";
  CHECK(feed_all({kFirst, forged_other_pid}, log).empty());
  // One that knows the boot's pid (the seat's, never shown inside) adds to its own record; no
  // line of the agent's can take a real refusal line away (each entry starts a line of its own).
  std::string forged = "D1203 11:48:55.455518   10336 client.go:400] send WalkReq{Path: [x\n" + refusal(SYS_bpf) + ", ]}\n";
  CHECK(feed_all({forged, refusal(SYS_keyctl)}, log) == std::vector<long>{SYS_bpf, SYS_keyctl});
}

TEST_CASE("sentry log: a first line of another shape: never heard, nothing counts") {
  SentryLog log;
  CHECK(feed_all({"{\"msg\":\"json log\"}\n", refusal(SYS_unshare)}, log).empty());
  CHECK_FALSE(log.heard());
}

TEST_CASE("sentry log: an overlong line is dropped whole, the next one counts") {
  SentryLog log;
  std::string longline(SentryLog::kMaxLine + 10, 'x');
  std::string overlong_refusal = refusal(SYS_unshare);
  overlong_refusal.insert(0, SentryLog::kMaxLine, ' ');  // too long: never parsed, even in pieces
  CHECK(feed_all({kFirst, longline.substr(0, 3000), longline.substr(3000), "\n", overlong_refusal, refusal(SYS_keyctl)}, log) ==
        std::vector<long>{SYS_keyctl});
}

TEST_CASE("sentry log: a refusal's row by number alone: the call, no family, no flags; unrecorded calls are -1") {
  CHECK(describe_refused(match_sentry_refusal(SYS_socket)) == "socket");
  CHECK(describe_refused(match_sentry_refusal(SYS_clone)) == "clone");
  CHECK(describe_refused(match_sentry_refusal(SYS_keyctl)) == "keyctl");
  CHECK(match_sentry_refusal(SYS_clone3).call == -1);   // unrecorded row
  CHECK(match_sentry_refusal(SYS_getpid).call == -1);   // no row
  CHECK(match_sentry_refusal(0x40000000 + SYS_unshare).call == -1);  // x32 numbers are not the sentry's
  CHECK(match_sentry_refusal(-1).call == -1);
}
