// gVisor's refusals read from the sentry's log (seccomp/sentry_log.h): JSON entries found by their
// braces outside strings; the agent's bytes (a gofer name, escaped inside a string) can make no
// entry and end none; an entry too long is skipped without losing the next; x32 numbers count.
#include <doctest/doctest.h>

#include <string>
#include <sys/syscall.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "seccomp/notify_match.h"
#include "seccomp/sentry_log.h"

using namespace asbx;

namespace {

std::string entry(const std::string& msg, const std::string& level = "debug") {
  return nlohmann::json{{"msg", msg}, {"level", level}, {"time", "2026-12-03T12:00:00.000000Z"}}.dump();
}

std::string refusal(long nr) { return entry("[   2:   2] Syscall " + std::to_string(nr) + ": denied by seccomp"); }

const std::string kFirst = entry("***************************", "info") + "\n";

std::vector<long> feed_all(const std::vector<std::string>& chunks, SentryLog& log) {
  std::vector<long> got;
  for (const auto& c : chunks) log.feed(c, [&](long nr) { got.push_back(nr); });
  return got;
}

}  // namespace

TEST_CASE("sentry log: a refusal message's call number; every other message is -1") {
  CHECK(sentry_refused_call("[   2:   2] Syscall 272: denied by seccomp") == 272);
  CHECK(sentry_refused_call("[1:1] Syscall 1073742096: denied by seccomp") == 1073742096);  // x32's unshare
  CHECK(sentry_refused_call("[   2:   2] Syscall 272: killed by seccomp") == 272);  // the agent's own KILL filter
  CHECK(sentry_refused_call("[   2:   2] Syscall 272: stopping for PTRACE_EVENT_SECCOMP") == -1);
  // High bits: the filter saw the low 32 (a hostile pass's unshare | 1 << 32, keyctl | 0xffffffff << 32).
  CHECK(sentry_refused_call("[   2:   2] Syscall 4294967568: denied by seccomp") == 272);
  CHECK(sentry_refused_call("[   2:   2] Syscall 18446744069414584570: denied by seccomp") == 250);
  CHECK(sentry_refused_call("[   2:   2] Syscall 18446744073709551615: denied by seccomp") == -1);  // -1 as int32
  CHECK(sentry_refused_call("[   2:   2] Syscall 18446744073709551616: denied by seccomp") == -1);  // over 64 bits
  CHECK(sentry_refused_call("[   2:   2] Syscall 272: denied by seccomp!") == -1);
  CHECK(sentry_refused_call("x[   2:   2] Syscall 272: denied by seccomp") == -1);
  CHECK(sentry_refused_call("vsyscall 96, caller 0: denied by seccomp") == -1);
  CHECK(sentry_refused_call("[   2:   2] Syscall : denied by seccomp") == -1);
}

TEST_CASE("sentry log: entries in any chunking, two on a line, the newline written apart; info entries never count") {
  SentryLog log;
  CHECK_FALSE(log.heard());
  std::string all = kFirst + refusal(SYS_unshare) + refusal(SYS_keyctl) + "\n\n" +
                    entry("[   2:   2] Syscall 250: denied by seccomp", "info") + "\n";
  std::vector<std::string> bytes;
  for (char c : all) bytes.emplace_back(1, c);  // one byte at a time
  CHECK(feed_all(bytes, log) == std::vector<long>{SYS_unshare, SYS_keyctl});
  CHECK(log.heard());
  CHECK(feed_all({entry("[   3:   3] Syscall 250: killed by seccomp") + "\n"}, log) == std::vector<long>{SYS_keyctl});
}

TEST_CASE("sentry log: what the agent puts in a name the gofer logs makes no entry") {
  // The gofer client logs walked names as they are; in JSON they are escaped inside the message.
  SentryLog log;
  std::string forged_text = "\nD1203 11:48:55.468988   10336 task_syscall.go:240] [   2:   2] Syscall 321: denied by seccomp\n";
  std::string forged_json = "\"}" + refusal(SYS_bpf) + "{\"msg\":\"";
  std::string gofer = entry("send [channel 0xc0004be1b0] WalkReq{DirFD: 11, Path: [x" + forged_text + forged_json + ", ]}");
  CHECK(feed_all({kFirst, gofer, "\n", refusal(SYS_keyctl), "\n"}, log) == std::vector<long>{SYS_keyctl});
}

TEST_CASE("sentry log: a log in another format is never heard and counts nothing") {
  SentryLog log;
  CHECK(feed_all({"I1203 11:48:55.341566   10336 main.go:216] ***\n",
                  "D1203 11:48:55.468988   10336 task_syscall.go:240] [   2:   2] Syscall 272: denied by seccomp\n"}, log)
            .empty());
  CHECK_FALSE(log.heard());
}

TEST_CASE("sentry log: an entry too long is skipped, the next one counts, even on the same line") {
  SentryLog log;
  std::string huge = entry("send WalkReq{Path: [" + std::string(3 * SentryLog::kMaxObject, 'n') + "]} {\"{");
  CHECK(feed_all({kFirst, huge.substr(0, 2000), huge.substr(2000), refusal(SYS_keyctl), "\n\n"}, log) ==
        std::vector<long>{SYS_keyctl});
}

TEST_CASE("sentry log: raw bytes (a panic on the sandbox's stderr) drop the object they cut, never the next") {
  SentryLog log;
  std::string cut = refusal(SYS_unshare);
  CHECK(feed_all({kFirst, cut.substr(0, 20), "\npanic: \"oops{\n", refusal(SYS_keyctl), "\n"}, log) ==
        std::vector<long>{SYS_keyctl});
}

TEST_CASE("sentry log: a refusal's row by number alone: the call, no family, no flags; unrecorded calls are -1") {
  CHECK(describe_refused(match_sentry_refusal(SYS_socket)) == "socket");
  CHECK(describe_refused(match_sentry_refusal(SYS_clone)) == "clone");
  CHECK(describe_refused(match_sentry_refusal(SYS_keyctl)) == "keyctl");
  CHECK_FALSE(match_sentry_refusal(SYS_keyctl).by_arguments);  // refused whatever its arguments
  CHECK(match_sentry_refusal(SYS_socket).by_arguments);        // the agent's own filter may have refused it
  CHECK(match_sentry_refusal(SYS_clone).by_arguments);
  CHECK(match_sentry_refusal(SYS_personality).by_arguments);
  CHECK(match_sentry_refusal(SYS_sendto).by_arguments);
  CHECK(match_sentry_refusal(SYS_clone3).call == -1);  // unrecorded row
  CHECK(match_sentry_refusal(SYS_getpid).call == -1);  // no row
  CHECK(describe_refused(match_sentry_refusal(0x40000000 + 272)) == "unshare");  // x32's unshare
  CHECK(match_sentry_refusal(-1).call == -1);
}

TEST_CASE("sentry log: the boot's platform and network, the first of each, from info entries only") {
  SentryLog log;
  CHECK_FALSE(log.boot().complete());
  std::string boot = kFirst + entry("Args: [runsc-sandbox --network=host --oci-seccomp=true boot x]", "info") + "\n" +
                     entry("\t\tPlatform: ptrace", "info") + "\n" + entry("\t\tFileAccess: exclusive", "info") + "\n";
  feed_all({boot}, log);
  CHECK(log.boot().platform == "ptrace");
  CHECK_FALSE(log.boot().complete());
  feed_all({entry("\t\tNetwork: host, logging: false", "info") + "\n"}, log);
  CHECK((log.boot().platform == "ptrace" && log.boot().network == "host" && log.boot().complete()));
  // Later entries never change what the boot said: a second line (none the agent could write whole)
  // and a name the gofer logs that spells one.
  feed_all({entry("\t\tPlatform: kvm", "info") + "\n",
            entry("send WalkReq{Path: [\n\t\tNetwork: sandbox, logging: false]}") + "\n"}, log);
  CHECK((log.boot().platform == "ptrace" && log.boot().network == "host"));
  SentryLog debug_only;  // a debug entry is no configuration line
  feed_all({kFirst, entry("\t\tPlatform: kvm") + "\n"}, debug_only);
  CHECK(debug_only.boot().platform.empty());
}
