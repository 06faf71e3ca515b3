// The seccomp recorder's pure parts (seccomp/notify_match.h, seccomp/refusal_tally.h) and the
// profile it listens under: recorded rows notify, clone3 stays ENOSYS, the digest is the rules'.
#include <doctest/doctest.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <linux/audit.h>
#include <string>
#include <sys/syscall.h>

#include "base/sha256.h"
#include "seccomp/notify_match.h"
#include "seccomp/profile.h"
#include "seccomp/refusal_tally.h"
#include "seccomp/syscall_numbers.h"

using namespace asbx;
using nlohmann::json;

namespace {

std::string default_text() {
  std::ifstream in(std::string(ASBX_SOURCE_DIR) + "/tests/unit/fixtures/seccomp/podman-4.3.1-default.json");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

RefusedCall native(long nr, std::uint64_t a0 = 0) {
  std::uint64_t args[6] = {a0, 0, 0, 0, 0, 0};
  return match_refused_call(AUDIT_ARCH_X86_64, std::int32_t(nr), args);
}

}  // namespace

TEST_CASE("seccomp recorder: a notification's row by call number and arguments") {
  CHECK(describe_refused(native(SYS_unshare)) == "unshare");
  CHECK(native(SYS_unshare).errno_value == EPERM);
  CHECK(describe_refused(native(SYS_keyctl)) == "keyctl");
  RefusedCall alg = native(SYS_socket, 38);
  CHECK(describe_refused(alg) == "socket(AF_ALG)");
  CHECK(alg.errno_value == EAFNOSUPPORT);
  CHECK(describe_refused(native(SYS_socket, 0x100000002ULL)) == "socket(AF_46+)");  // high bits: the last bucket
  CHECK(describe_refused(native(SYS_socket, 4096)) == "socket(AF_46+)");
  CHECK(describe_refused(native(SYS_clone, 0x10000000 | 0x40000000 | 17)) == "clone(CLONE_NEWUSER|CLONE_NEWNET)");
  CHECK(native(SYS_clone, 0x10000000).errno_value == EPERM);
  // clone3 is no recorded row (libc tries it at every start); an unknown call: EPERM, "other"
  CHECK(native(SYS_clone3).call == -1);
  CHECK(describe_refused(native(SYS_read)) == "other");
  CHECK(native(SYS_read).errno_value == EPERM);
  // the same call from an i386 process has its own number (unshare is 310 there, socket 359)
  std::uint64_t args[6] = {38, 0, 0, 0, 0, 0};
  CHECK(describe_refused(match_refused_call(AUDIT_ARCH_I386, 310, args)) == "unshare");
  CHECK(describe_refused(match_refused_call(AUDIT_ARCH_I386, 359, args)) == "socket(AF_ALG)");
  CHECK(describe_refused(match_refused_call(AUDIT_ARCH_I386, 102, args)) == "socketcall");
  // x32: the native number with bit 30 set
  CHECK(describe_refused(match_refused_call(AUDIT_ARCH_X86_64, 0x40000000 | SYS_unshare, args)) == "unshare");
}

TEST_CASE("seccomp recorder: every call of a recorded row has a number on this machine") {
  for (const auto& name : recorded_call_names()) {
    bool found = false;
    for (const auto& arch : table_call_numbers())
      for (const auto& c : arch.calls) found = found || (name == c.name && c.nr >= 0);
    INFO(name);
    CHECK(found);
  }
  for (const auto& row : seccomp_table())
    for (const auto& call : row.calls) {
      bool listed = false;
      for (const auto& c : table_calls_native()) listed = listed || call == c.name;
      INFO(call);
      CHECK(listed);  // seccomp/table_calls.inc names every call of the table
    }
}

TEST_CASE("seccomp recorder: socket's two recorded rows answer their own errno") {
  std::uint64_t alg[6] = {38, 1, 0, 0, 0, 0}, raw[6] = {2, 3, 0, 0, 0, 0}, pair[6] = {16, 1, 0, 0, 0, 0};
  CHECK(match_refused_call(AUDIT_ARCH_X86_64, SYS_socket, alg).errno_value == EAFNOSUPPORT);
  RefusedCall r = match_refused_call(AUDIT_ARCH_X86_64, SYS_socket, raw);  // SOCK_RAW on AF_INET
  CHECK(r.errno_value == ESOCKTNOSUPPORT);
  CHECK(describe_refused(r) == "socket(AF_INET)");
  CHECK(match_refused_call(AUDIT_ARCH_X86_64, SYS_socketpair, pair).errno_value == EAFNOSUPPORT);
  CHECK(match_refused_call(AUDIT_ARCH_X86_64, SYS_setsockopt, raw).errno_value == ENOPROTOOPT);
  CHECK(match_refused_call(AUDIT_ARCH_X86_64, SYS_memfd_secret, raw).errno_value == ENOSYS);
}

TEST_CASE("seccomp recorder: the tally is fixed counters, the first said once") {
  RefusalTally t;
  CHECK(t.json()["refused"] == 0);
  CHECK(t.json()["first"].is_null());
  CHECK(t.count(native(SYS_socket, 38), 1000));
  bool again = false;
  RefusedCall unshare = native(SYS_unshare);
  for (int i = 0; i < 1'000'000; ++i) again = t.count(unshare, 2000 + i) || again;
  CHECK_FALSE(again);
  CHECK_FALSE(t.count(native(SYS_read), 5));
  json j = t.json();
  CHECK(j["refused"] == 1'000'002);
  CHECK(j["calls"] == json{{"unshare", 1'000'000}, {"socket", 1}});
  CHECK(j["socket_families"] == json{{"AF_ALG", 1}});
  CHECK(j["other"] == 1);
  CHECK(j["first"] == "socket(AF_ALG)");
  CHECK(j["first_unix_ms"] == 1000);
}

TEST_CASE("seccomp recorder: recorded rows notify the listener, clone3 stays ENOSYS, the digest is the rules'") {
  json base = json::parse(default_text());
  json out = render_seccomp_profile(base, "runc", "/run/asbx/s1/seccomp.sock");
  CHECK(out["listenerPath"] == "/run/asbx/s1/seccomp.sock");
  int notify = 0;
  for (const auto& e : out["syscalls"]) {
    bool ours = e.value("comment", "").rfind("agent-sandbox: ", 0) == 0;
    if (!ours) continue;
    // the table's two unrecorded rows: clone3 (ENOSYS) and AF_INET/AF_INET6's other protocols
    bool plain = e["names"] == json::array({"clone3"}) || e.value("errnoRet", 0) == EPROTONOSUPPORT;
    CHECK(e["action"] == (plain ? "SCMP_ACT_ERRNO" : "SCMP_ACT_NOTIFY"));
    CHECK(e.contains("errnoRet") == plain);
    notify += !plain;
  }
  CHECK(notify > 40);
  CHECK_FALSE(render_seccomp_profile(base).contains("listenerPath"));
  SeccompPlan plain = plan_seccomp("/d.json", default_text(), "/run/asbx", "s1");
  SeccompPlan rec = plan_seccomp("/d.json", default_text(), "/run/asbx", "s1", "runc", "/run/asbx/s1/seccomp.sock");
  CHECK(rec.digest == plain.digest);  // what seccomp-profile prints and a kube node takes
  CHECK(rec.digest == sha256_hex(plain.text));
  CHECK(rec.text != plain.text);
  CHECK(rec.listener == "/run/asbx/s1/seccomp.sock");
  CHECK(plain.listener.empty());
  CHECK(json::parse(rec.text)["listenerPath"] == "/run/asbx/s1/seccomp.sock");
}
