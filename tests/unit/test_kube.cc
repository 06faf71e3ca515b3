#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "plan/config.h"
#include "plan/build_plan.h"
#include "base/error.h"
#include "launcher/kube/kube.h"
#include "base/request.h"
#include "launcher/kube/yaml.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;
using json = nlohmann::ordered_json;

namespace {
const char* kMarker = "kube-secret-MARKER-4b1d";  // a credential's content: must appear nowhere

SessionFacts facts() { return fixed_facts({{"TERM", "xterm"}, {"OPENAI_API_KEY", kMarker}}); }

// A plan as build_plan makes it, plus what a workspace, a linked worktree and a codex
// credential add (the staging mounts included, which the manifest must leave out).
LaunchPlan session_plan(const std::string& network = "none") {
  Request r;
  r.id = "k1";
  r.argv = {"git", "commit", "-m", "no"};
  r.timeout = "90s";
  r.network = network;
  r.pod_manifest = true;  // as --pod-manifest asks: the cluster gives the Pod its user namespace
  SeatConfig seat = parse_seat_config("socket = \"/s.sock\"\n", "seat.toml", root_user());
  LaunchPlan plan = build_plan(r, seat, root_user(), facts());
  plan.mounts.push_back({"bind", "/srv/ws/proj", "/sandbox/workspaces/proj", {"rbind", "rw", "nosuid", "nodev"}});
  plan.mounts.push_back({"bind", "/srv/git/proj.git", "/srv/git/proj.git", {"rbind", "rw", "nosuid", "nodev"}});
  plan.credentials.push_back({"codex", "/root/.codex/auth.json", "/sandbox/home/.codex/auth.json"});
  plan.workdir = "/sandbox/workspaces/proj";
  return plan;
}

const json kSecurity = {{"runAsUser", 1000},
                        {"runAsGroup", 1000},
                        {"runAsNonRoot", true},
                        {"allowPrivilegeEscalation", false},
                        {"privileged", false},
                        {"readOnlyRootFilesystem", true},
                        {"capabilities", {{"drop", {"ALL"}}}},
                        {"seccompProfile", {{"type", "RuntimeDefault"}}}};
const json kResources = {{"limits", {{"memory", "12Gi"}, {"cpu", "4"}, {"ephemeral-storage", "8Gi"}}},
                          {"requests", {{"memory", "12Gi"}, {"cpu", "4"}, {"ephemeral-storage", "8Gi"}}}};

std::string read_doc(const std::string& rel) {
  std::ifstream in(std::string(ASBX_SOURCE_DIR) + "/" + rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("kube: the Pod carries the plan's containment, field by field") {
  auto docs = kube_manifest(session_plan());
  REQUIRE(docs.size() == 2);
  const json pod = docs[0];
  CHECK(pod["apiVersion"] == "v1");
  CHECK(pod["kind"] == "Pod");
  CHECK(pod["metadata"]["name"] == "asbx-k1");
  CHECK(pod["metadata"]["labels"] == json({{"agent-sandbox.owner", "root"},
                                           {"agent-sandbox.session", "k1"},
                                           {"agent-sandbox.started", "1700000000"},
                                           {"agent-sandbox.timeout-ms", "90000"}}));
  const json& spec = pod["spec"];
  CHECK(spec["restartPolicy"] == "Never");
  CHECK(spec["automountServiceAccountToken"] == false);
  CHECK(spec["enableServiceLinks"] == false);
  CHECK(spec["hostname"] == "agent-sandbox");
  CHECK(spec["activeDeadlineSeconds"] == 90);
  CHECK(spec["terminationGracePeriodSeconds"] == 10);
  CHECK(spec["securityContext"] ==
        json({{"runAsNonRoot", true}, {"fsGroup", 1000}, {"seccompProfile", {{"type", "RuntimeDefault"}}}}));
  REQUIRE(spec["containers"].size() == 1);
  const json& agent = spec["containers"][0];
  CHECK(agent["name"] == "agent");
  CHECK(agent["image"] == "localhost/agent-sandbox:latest");
  CHECK(agent["imagePullPolicy"] == "Never");
  CHECK(agent["command"] == json({"git", "commit", "-m", "no"}));
  CHECK(agent["workingDir"] == "/sandbox/workspaces/proj");
  CHECK(agent["env"] == json::array({{{"name", "PATH"}, {"value", "/usr/local/bin:/usr/bin:/bin"}},
                                     {{"name", "HOME"}, {"value", "/sandbox/home"}},
                                     {{"name", "USER"}, {"value", "agent"}},
                                     {{"name", "TERM"}, {"value", "xterm"}},
                                     {{"name", "AGENT_SANDBOX_SESSION"}, {"value", "k1"}}}));
  CHECK(agent["securityContext"] == kSecurity);
  CHECK(agent["resources"] == kResources);
  CHECK(agent["volumeMounts"] == json::array({
                                     {{"name", "asbx-k1-tmp"}, {"mountPath", "/tmp"}},
                                     {{"name", "asbx-k1-shm"}, {"mountPath", "/dev/shm"}},
                                     {{"name", "asbx-k1-home"}, {"mountPath", "/sandbox/home"}},
                                     {{"name", "asbx-k1-bind0"}, {"mountPath", "/sandbox/workspaces/proj"}, {"readOnly", false}},
                                     {{"name", "asbx-k1-bind1"}, {"mountPath", "/srv/git/proj.git"}, {"readOnly", false}},
                                 }));
  CHECK(spec["volumes"] == json::array({
                               {{"name", "asbx-k1-tmp"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "512Mi"}}}},
                               {{"name", "asbx-k1-shm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "64Mi"}}}},
                               {{"name", "asbx-k1-home"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "512Mi"}}}},
                               {{"name", "asbx-k1-bind0"}, {"hostPath", {{"path", "/srv/ws/proj"}, {"type", "Directory"}}}},
                               {{"name", "asbx-k1-bind1"}, {"hostPath", {{"path", "/srv/git/proj.git"}, {"type", "Directory"}}}},
                               {{"name", "asbx-k1-cred-codex"},
                                {"secret",
                                 {{"secretName", "asbx-k1-codex"},
                                  {"items", {{{"key", "auth.json"}, {"path", "auth.json"}}}},
                                  {"defaultMode", 0440},
                                  {"optional", false}}}},
                           }));
}

TEST_CASE("kube: the credential is copied by an init container from a Secret reference") {
  const json spec = kube_manifest(session_plan())[0]["spec"];
  REQUIRE(spec["initContainers"].size() == 1);
  const json& init = spec["initContainers"][0];
  CHECK(init["name"] == "credentials");
  CHECK(init["securityContext"] == kSecurity);
  CHECK(init["resources"] == kResources);
  REQUIRE(init["command"].size() == 6);
  CHECK(init["command"][0] == "/bin/sh");
  CHECK(init["command"][3] == "asbx-credentials");
  CHECK(init["command"][4] == "/sandbox-secrets/codex/auth.json");
  CHECK(init["command"][5] == "/sandbox/home/.codex/auth.json");
  CHECK(init["volumeMounts"] == json::array({{{"name", "asbx-k1-home"}, {"mountPath", "/sandbox/home"}},
                                             {{"name", "asbx-k1-cred-codex"},
                                              {"mountPath", "/sandbox-secrets/codex"},
                                              {"readOnly", true}}}));
  LaunchPlan plan = session_plan();
  CHECK(kube_secret_name(plan, plan.credentials[0]) == "asbx-k1-codex");
}

TEST_CASE("kube: no credential value, no seat path, no launcher-only label in the manifest") {
  std::string yaml = kube_yaml(session_plan());
  CHECK(yaml.find(kMarker) == std::string::npos);
  CHECK(yaml.find("OPENAI_API_KEY") == std::string::npos);
  CHECK(yaml.find("/run/asbx/k1") == std::string::npos);
  CHECK(yaml.find("launcher-pid") == std::string::npos);
  CHECK(yaml.find("boot-id") == std::string::npos);
  const json agent = kube_manifest(session_plan())[0]["spec"]["containers"][0];
  for (const auto& m : agent["volumeMounts"]) CHECK(m["mountPath"].get<std::string>().rfind("/sandbox-secrets", 0) != 0);
}

TEST_CASE("kube: what a Pod cannot say is annotated, one key per documented gap") {
  const json annotations = kube_manifest(session_plan())[0]["metadata"]["annotations"];
  CHECK(annotations == json({{"agent-sandbox/pids-limit", "512"},
                             {"agent-sandbox/nofile", "8192"},
                             {"agent-sandbox/nproc", "4096"},
                             {"agent-sandbox/cpu-shares", "256"},
                             {"agent-sandbox/memory-swap", "0"},
                             {"agent-sandbox/disk-inodes", "200000"},
                             {"agent-sandbox/host-paths", "bind0,bind1"},
                             {"agent-sandbox/pod-security", "privileged"},
                             {"agent-sandbox/init", "podman-init"},
                             {"agent-sandbox/network", "none"},
                             {"agent-sandbox/egress", "none"},
                             {"agent-sandbox/mount-options.tmp", "nosuid,nodev,mode=1777"},
                             {"agent-sandbox/mount-options.shm", "nosuid,nodev,noexec,mode=1777"},
                             {"agent-sandbox/mount-options.home", "nosuid,nodev,mode=0700,U"},
                             {"agent-sandbox/mount-options.bind0", "nosuid,nodev"},
                             {"agent-sandbox/mount-options.bind1", "nosuid,nodev"}}));
  for (const auto& g : kube_gaps()) {  // every key is a documented gap (VOLUME: any volume)
    std::string key = g.annotation;
    auto family = key.substr(0, key.find(".VOLUME"));
    bool present = false;
    for (const auto& [k, v] : annotations.items()) present = present || k == key || k.rfind(family + ".", 0) == 0;
    CHECK_MESSAGE(present, key);
  }
  for (const auto& [k, v] : annotations.items()) CHECK(v.get<std::string>().size() <= 63);  // podman 4.3's limit
  std::string doc = read_doc("docs/KUBERNETES.md");
  for (const auto& g : kube_gaps()) CHECK_MESSAGE(doc.find(std::string("`") + g.annotation + "`") != std::string::npos, g.annotation);
}

TEST_CASE("kube: network none is a deny-all NetworkPolicy; slirp4netns the open Pod network; a seat namespace is refused") {
  auto docs = kube_manifest(session_plan());
  CHECK(docs[1] == json({{"apiVersion", "networking.k8s.io/v1"},
                         {"kind", "NetworkPolicy"},
                         {"metadata", {{"name", "asbx-k1"}, {"labels", {{"agent-sandbox.session", "k1"}}}}},
                         {"spec",
                          {{"podSelector", {{"matchLabels", {{"agent-sandbox.session", "k1"}}}}},
                           {"policyTypes", {"Ingress", "Egress"}}}}}));
  auto open = kube_manifest(session_plan("slirp4netns"));
  CHECK(open.size() == 1);
  CHECK(open[0]["metadata"]["annotations"]["agent-sandbox/network"] == "slirp4netns");  // no policy: open egress
  try {
    kube_manifest(session_plan("ns:/run/netns/proxy"));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()) ==
          "kube: --network ns:/run/netns/proxy has no Pod form (a Pod cannot join a network namespace of the seat); use none");
  }
}

TEST_CASE("kube: no timeout, no deadline; no credential, no init container; no bind, restricted") {
  Request r;
  r.id = "k2";
  r.argv = {"true"};
  r.pod_manifest = true;
  SeatConfig seat = parse_seat_config("socket = \"/s.sock\"\n", "seat.toml", root_user());
  const json pod = kube_manifest(build_plan(r, seat, root_user(), facts()))[0];
  CHECK_FALSE(pod["spec"].contains("activeDeadlineSeconds"));
  CHECK_FALSE(pod["spec"].contains("initContainers"));
  CHECK(pod["metadata"]["annotations"]["agent-sandbox/pod-security"] == "restricted");
  CHECK(pod["metadata"]["annotations"]["agent-sandbox/host-paths"] == "");
}

TEST_CASE("kube: a session id that is not a Kubernetes name is refused") {
  LaunchPlan plan = session_plan();
  plan.session_id = "K_1";
  CHECK_THROWS_WITH_AS(kube_manifest(plan),
                       "kube: 'asbx-K_1' is not a Kubernetes name (at most 63 lowercase letters, digits and '-'); "
                       "use a shorter --id of lowercase letters, digits and '-'",
                       Error);
  plan.session_id = std::string(50, 'a');
  CHECK_THROWS_AS(kube_manifest(plan), Error);
}

TEST_CASE("yaml: block style, every string double-quoted, risky keys quoted") {
  json v = {{"kind", "Pod"},
            {"no", "no"},
            {"list", {"0755", 1, true, nullptr}},
            {"items", json::array({{{"a", 1}, {"b", json::array()}}, json::object()})},
            {"text", "line\nnext \"q\" \x7f \xc2\x85 \xe2\x80\xa8 tab\t"}};
  CHECK(to_yaml(v) ==
        "kind: \"Pod\"\n"
        "\"no\": \"no\"\n"
        "list:\n"
        "  - \"0755\"\n"
        "  - 1\n"
        "  - true\n"
        "  - null\n"
        "items:\n"
        "  - a: 1\n"
        "    b: []\n"
        "  - {}\n"
        "text: \"line\\nnext \\\"q\\\" \\u007f \\u0085 \\u2028 tab\\t\"\n");
  CHECK(yaml_stream({json{{"a", 1}}, json{{"b", 2}}}) == "a: 1\n---\nb: 2\n");
  CHECK_THROWS_WITH_AS(to_yaml(json("\xff")), "kube: a value is not valid UTF-8, so it cannot be written as YAML", Error);
}

TEST_CASE("kube: an egress session keeps the deny-all policy, names its list and carries the proxy variables") {
  Request r;
  r.id = "k3";
  r.argv = {"true"};
  r.egress = {"api.openai.com", "*.anthropic.com"};
  r.pod_manifest = true;
  LaunchPlan plan = build_plan(r, parse_seat_config("socket = \"/s.sock\"\n", "seat.toml", root_user()), root_user(), facts());
  auto docs = kube_manifest(plan);
  REQUIRE(docs.size() == 2);
  CHECK(docs[1]["kind"] == "NetworkPolicy");
  CHECK(docs[0]["metadata"]["annotations"]["agent-sandbox/egress"] == "api.openai.com:443,*.anthropic.com:443");
  json env = docs[0]["spec"]["containers"][0]["env"];
  CHECK(std::find(env.begin(), env.end(), json({{"name", "HTTPS_PROXY"}, {"value", "http://127.0.0.1:3128"}})) != env.end());
  r.egress = {"a-very-long-name-for-an-endpoint.example.com", "another-long-endpoint.example.com"};
  plan = build_plan(r, parse_seat_config("socket = \"/s.sock\"\n", "seat.toml", root_user()), root_user(), facts());
  try {
    kube_manifest(plan);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).rfind("kube: the egress list 'a-very-long-name", 0) == 0);
  }
}

TEST_CASE("kube: a workspace holding a repository is refused (a Pod has no launcher to copy and sweep its gitdir)") {
  LaunchPlan plan = session_plan();
  plan.git.shape = "plain";
  plan.git.workspace.path = "/srv/ws/proj";
  CHECK_THROWS_WITH_AS(kube_manifest(plan),
                       "kube: workspace '/srv/ws/proj' holds a repository (a plain clone): its gitdir's root becomes a "
                       "tmpfs the launcher fills before the agent and copies back and sweeps after it, which a Pod "
                       "cannot do; run it with the launcher, or give a workspace without a repository",
                       Error);
  plan.git.shape = "linked_worktree";
  CHECK_THROWS_AS(kube_manifest(plan), Error);
  plan.git.shape = "none";
  CHECK_NOTHROW(kube_manifest(plan));
}
