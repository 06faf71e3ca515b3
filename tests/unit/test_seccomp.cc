// The project's seccomp profile (seccomp/): the table rendered onto podman's default.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <set>

#include "base/error.h"
#include "base/sha256.h"
#include "seccomp/profile.h"
#include "seccomp/table.h"

using namespace asbx;
using nlohmann::json;

namespace {

std::string fixture_text() {
  std::ifstream in(std::string(ASBX_SOURCE_DIR) + "/tests/unit/fixtures/seccomp/podman-4.3.1-default.json");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool names(const json& entry, const std::string& call) {
  for (const auto& n : entry.value("names", json::array()))
    if (n == call) return true;
  return entry.value("name", "") == call;
}

// Every entry of `profile` that allows `call`.
std::vector<json> allows(const json& profile, const std::string& call) {
  std::vector<json> out;
  for (const auto& e : profile["syscalls"])
    if (e["action"] == "SCMP_ACT_ALLOW" && names(e, call)) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("seccomp: sha256 of the standard vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex(std::string(1000, 'a')) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST_CASE("seccomp: every call of the table is refused, whatever the default said") {
  json out = render_seccomp_profile(json::parse(fixture_text()));
  for (const auto& row : seccomp_table())
    for (const auto& call : row.calls) {
      for (const auto& e : allows(out, call)) {
        INFO(call << " allowed by " << e.dump());
        CHECK(row.match != SeccompMatch::always);  // only the conditional rows keep a part
        CHECK(e.value("comment", "") == "agent-sandbox");
        CHECK(!e["args"].empty());
      }
    }
  CHECK(out["defaultAction"] == "SCMP_ACT_ERRNO");
}

TEST_CASE("seccomp: nothing the default refuses becomes allowed") {
  json base = json::parse(fixture_text());
  json out = render_seccomp_profile(base);
  std::set<std::string> base_allowed;
  for (const auto& e : base["syscalls"])
    if (e["action"] == "SCMP_ACT_ALLOW")
      for (const auto& n : e.value("names", json::array())) base_allowed.insert(n);
  for (const auto& e : out["syscalls"])
    if (e["action"] == "SCMP_ACT_ALLOW")
      for (const auto& n : e["names"]) CHECK_MESSAGE(base_allowed.count(n), n);
  // A default that refuses clone and socket whole: the table adds no allow for them.
  for (auto& e : base["syscalls"]) {
    json kept = json::array();
    for (const auto& n : e.value("names", json::array()))
      if (n != "clone" && n != "socket") kept.push_back(n);
    e["names"] = kept;
  }
  json strict = render_seccomp_profile(base);
  CHECK(allows(strict, "clone").empty());
  CHECK(allows(strict, "socket").empty());
}

TEST_CASE("seccomp: clone without CLONE_NEW*, the allowed socket families, netlink route only") {
  json out = render_seccomp_profile(json::parse(fixture_text()));
  auto clone = allows(out, "clone");
  REQUIRE(clone.size() == 1);
  CHECK(clone[0]["args"][0] == json({{"index", 0}, {"value", kCloneNewMask}, {"valueTwo", 0}, {"op", "SCMP_CMP_MASKED_EQ"}}));
  std::set<std::uint64_t> families;
  for (const auto& e : allows(out, "socket")) families.insert(e["args"][0]["value"].get<std::uint64_t>());
  CHECK(families == std::set<std::uint64_t>{1, 2, 10, 16});
  CHECK(socket_family_name(38) == "AF_ALG");
  CHECK(socket_family_name(4096) == "AF_4096");
  CHECK(clone_new_flags().size() == 7);
}

TEST_CASE("seccomp: the plan names the profile by its digest; a missing default refuses to plan") {
  SeccompPlan p = plan_seccomp("/usr/share/containers/seccomp.json", fixture_text(), "/run/asbx", "s1");
  CHECK(p.digest == sha256_hex(p.text));
  CHECK(p.base_digest == sha256_hex(fixture_text()));
  CHECK(p.path == "/run/asbx/seccomp-s1-" + p.digest + ".json");
  CHECK(plan_seccomp("/x", fixture_text(), "/r", "s2").text == p.text);  // rendering is deterministic
  REQUIRE_THROWS_WITH_AS(plan_seccomp("/nope.json", "", "/r", "s"),
                         "the seat's podman default seccomp profile '/nope.json' is missing or empty; nothing was created",
                         Error);
  REQUIRE_THROWS_WITH_AS(plan_seccomp("/x.json", "{\"syscalls\":[]}", "/r", "s"),
                         "the seat's podman default seccomp profile '/x.json': it is not a seccomp profile (no "
                         "defaultAction or syscalls); nothing was created",
                         Error);
  try {
    plan_seccomp("/x.json", "not json", "/r", "s");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::seccomp_unavailable);
    CHECK(e.exit_code() == 233);
  }
}

TEST_CASE("seccomp: socketcall is refused before socket's rules (runc refuses the other order)") {
  json out = render_seccomp_profile(json::parse(fixture_text()));
  int socketcall = -1, first_socket = -1, i = 0;
  for (const auto& e : out["syscalls"]) {
    if (names(e, "socketcall") && socketcall < 0) socketcall = i;
    if (names(e, "socket") && first_socket < 0) first_socket = i;
    ++i;
  }
  REQUIRE(socketcall >= 0);
  REQUIRE(first_socket >= 0);
  CHECK(socketcall < first_socket);
}

TEST_CASE("seccomp: a gVisor session's profile keeps clone3 as the default has it, and every other row") {
  json base = json::parse(fixture_text());
  json runc = render_seccomp_profile(base);
  json gvisor = render_seccomp_profile(base, "gvisor");
  CHECK(allows(runc, "clone3").empty());
  CHECK(allows(gvisor, "clone3").size() == allows(base, "clone3").size());
  CHECK(!allows(base, "clone3").empty());
  for (const char* call : {"unshare", "setns", "mount", "keyctl", "ptrace", "socketcall"}) {
    INFO(call);
    CHECK(allows(gvisor, call).empty());
  }
  for (const auto& row : seccomp_table()) CHECK(seccomp_row_applies(row, "runc"));
}

TEST_CASE("seccomp: a plan made again with the same default, wall and listener is the first's; any other input renders anew") {
  std::string text = fixture_text();
  json base = json::parse(text);
  auto rendered = [&](const json& b, const std::string& wall, const std::string& listener) {
    return render_seccomp_profile(b, wall, listener).dump(1) + "\n";
  };
  SeccompPlan first = plan_seccomp("/d.json", text, "/r", "s1", "runc", "/r/s1/seccomp.sock");
  CHECK(plan_seccomp("/d.json", text, "/r", "s1", "runc", "/r/s1/seccomp.sock") == first);
  CHECK(first.text == rendered(base, "runc", "/r/s1/seccomp.sock"));
  SeccompPlan other = plan_seccomp("/d.json", text, "/r", "s1", "runc", "/r/s2/seccomp.sock");
  CHECK(other.text == rendered(base, "runc", "/r/s2/seccomp.sock"));
  CHECK(other.digest == first.digest);  // the rules without a listener are the same
  CHECK(plan_seccomp("/d.json", text, "/r", "s1", "gvisor", "").text == rendered(base, "gvisor", ""));
  json changed = base;
  changed["defaultErrnoRet"] = 1;
  SeccompPlan again = plan_seccomp("/d.json", changed.dump(), "/r", "s1", "runc", "/r/s1/seccomp.sock");
  CHECK(again.text == rendered(changed, "runc", "/r/s1/seccomp.sock"));
  CHECK(again.base_digest == sha256_hex(changed.dump()));
  CHECK(plan_seccomp("/d.json", text, "/r", "s1", "runc", "/r/s1/seccomp.sock") == first);
}
