// The warm pool's fits check (launcher/podman/pool_fit.h): what a claim binds per session is left
// out of the digest; anything else in the create body, named or not, changes it.
#include <doctest/doctest.h>

#include "launcher/podman/pool_fit.h"

using namespace asbx;
using nlohmann::json;

namespace {

json body(const std::string& session) {
  return {
      {"name", "asbx-" + session},
      {"image", "localhost/agent-sandbox:latest"},
      {"command", {"codex", "exec", session}},
      {"env", {{"AGENT_SANDBOX_SESSION", session}, {"HOME", "/sandbox/home"}}},
      {"labels", {{"agent-sandbox.session", session}}},
      {"work_dir", "/ws/" + session},
      {"terminal", false},
      {"cap_drop", {"ALL"}},
      {"volatile", true},
      {"resource_limits", {{"memory", {{"limit", 1 << 30}}}}},
      {"mounts",
       {{{"type", "tmpfs"}, {"source", "tmpfs"}, {"destination", "/tmp"}, {"options", {"size=512m"}}},
        {{"type", "bind"}, {"source", "/ws/" + session}, {"destination", "/ws/" + session}, {"options", {"rbind"}}}}},
  };
}

}  // namespace

TEST_CASE("pool fit: the per-session parts are left out of the digest") {
  json a = body("one"), b = body("two");
  b["resource_limits"]["memory"]["limit"] = 2 << 30;
  CHECK(pool_fit_digest(a) == pool_fit_digest(b));
  CHECK(pool_fit_digest(a).rfind("sha256:", 0) == 0);
  CHECK(pool_fit_digest(a).size() == 7 + 64);
  json fit = pool_fit_body(a);
  CHECK(fit["mounts"].size() == 1);  // the tmpfs stays, the bind goes
  CHECK_FALSE(fit.contains("env"));
}

TEST_CASE("pool fit: anything else in the body changes the digest, named here or not") {
  json base = body("one");
  std::string d = pool_fit_digest(base);
  auto changed = [&](const char* what, auto edit) {
    json b = base;
    edit(b);
    CHECK_MESSAGE(pool_fit_digest(b) != d, what);
  };
  changed("image", [](json& b) { b["image"] = "localhost/other:latest"; });
  changed("tty", [](json& b) { b["terminal"] = true; });
  changed("tmpfs size", [](json& b) { b["mounts"][0]["options"] = {"size=1g"}; });
  changed("a field another issue adds", [](json& b) { b["log_driver"] = "none"; });
  changed("a seccomp profile", [](json& b) { b["seccomp_profile_path"] = "/usr/share/agent-sandbox/seccomp.json"; });
  changed("a runtime", [](json& b) { b["oci_runtime"] = "runsc"; });
  changed("a lever removed", [](json& b) { b.erase("volatile"); });
}
