// The warm pool's fits check (launcher/podman/pool_fit.h): a member's name, labels, id and range are
// left out of the digest; anything else in the create body, named or not, changes it.
#include <doctest/doctest.h>

#include "launcher/podman/pool_fit.h"

using namespace asbx;
using nlohmann::json;

namespace {

json body(const std::string& session) {
  return {
      {"name", "asbx-" + session},
      {"image", "localhost/agent-sandbox:latest"},
      {"command", {"/bin/sh", "/sandbox/.claim/spec"}},
      {"env", {{"PATH", "/usr/bin:/bin"}}},
      {"labels", {{"agent-sandbox.session", session}}},
      {"work_dir", "/"},
      {"terminal", false},
      {"cap_drop", {"ALL"}},
      {"volatile", true},
      {"resource_limits", {{"memory", {{"limit", 1 << 30}}}}},
      {"idmappings", {{"UIDMap", {{{"container_id", 0}, {"host_id", session == "one" ? 1879048192 : 1879113728}, {"size", 65536}}}}}},
      {"mounts",
       {{{"type", "tmpfs"}, {"source", "tmpfs"}, {"destination", "/tmp"}, {"options", {"size=512m"}}},
        {{"type", "bind"}, {"source", "/run/s/" + session + "/tmpfs/ws"}, {"destination", "/sandbox/workspaces"}, {"options", {"rbind", "ro", "rslave"}}}}},
  };
}

}  // namespace

TEST_CASE("pool fit: name, labels, the id in paths and the range are left out of the digest") {
  json a = body("one"), b = body("two");
  CHECK(pool_fit_digest(a, "one") == pool_fit_digest(b, "two"));
  CHECK(pool_fit_digest(a, "one").rfind("sha256:", 0) == 0);
  CHECK(pool_fit_digest(a, "one").size() == 7 + 64);
  json fit = pool_fit_body(a, "one");
  CHECK(fit["mounts"][1]["source"] == "/run/s/{session}/tmpfs/ws");
  CHECK(fit["idmappings"]["UIDMap"][0]["host_id"] == 0);
  CHECK_FALSE(fit.contains("labels"));
  CHECK_FALSE(fit.contains("name"));
  CHECK_FALSE(fit.contains("resource_limits"));  // applied at claim (launcher/pool/warm_limits.h)
}

TEST_CASE("pool fit: anything else in the body changes the digest, named here or not") {
  json base = body("one");
  std::string d = pool_fit_digest(base, "one");
  auto changed = [&](const char* what, auto edit) {
    json b = base;
    edit(b);
    CHECK_MESSAGE(pool_fit_digest(b, "one") != d, what);
  };
  changed("image", [](json& b) { b["image"] = "localhost/other:latest"; });
  changed("tty", [](json& b) { b["terminal"] = true; });
  changed("tmpfs size", [](json& b) { b["mounts"][0]["options"] = {"size=1g"}; });
  changed("a field another issue adds", [](json& b) { b["log_driver"] = "none"; });
  changed("a seccomp profile", [](json& b) { b["seccomp_profile_path"] = "/usr/share/agent-sandbox/seccomp.json"; });
  changed("a runtime", [](json& b) { b["oci_runtime"] = "runsc"; });
  changed("a lever removed", [](json& b) { b.erase("volatile"); });
  changed("the range's size", [](json& b) { b["idmappings"]["UIDMap"][0]["size"] = 1; });
  changed("an env var", [](json& b) { b["env"]["X"] = "1"; });
}
