// doctor's image contract verdict (launcher/doctor/doctor_image.h) from fixed facts.
#include <doctest/doctest.h>

#include "launcher/doctor/doctor_image.h"

using namespace asbx;

namespace {

ImageFacts good() {
  ImageFacts f;
  f.image = "localhost/agent-sandbox:latest";
  read_image_config(nlohmann::json{{"Os", "linux"}, {"Architecture", "amd64"}, {"Config", {{"Entrypoint", nullptr}}}},
                    f);
  f.probed = true;
  return f;
}

}  // namespace

TEST_CASE("doctor image: an image meeting the contract passes, its toolchains listed") {
  auto checks = image_contract_checks(good(), "amd64");
  REQUIRE(checks.size() == 2);
  CHECK(checks[0].name == "image_contract");
  CHECK(checks[0].ok);
  CHECK(checks[0].detail == "localhost/agent-sandbox:latest meets the image contract (bash git codex claude, "
                            "/sandbox/home, /sandbox/workspaces, no ENTRYPOINT)");
  CHECK(checks[1].name == "image_tools");
  CHECK(checks[1].ok);
  CHECK(checks[1].detail == "all present: node npm pnpm bun python3 pip3 pytest cargo rustc cc make gh rg jq");
}

TEST_CASE("doctor image: every breach is named on one line with the remedy") {
  ImageFacts f;
  f.image = "example/img:1";
  read_image_config(nlohmann::json{{"Os", "linux"}, {"Architecture", "arm64"},
                                   {"Config", {{"Entrypoint", {"/usr/bin/tini", "--"}}}}},
                    f);
  f.probed = true;
  f.missing_dirs = {"/sandbox/home"};
  f.missing_commands = {"codex", "claude"};
  f.missing_tools = {"bun", "cargo"};
  auto checks = image_contract_checks(f, "amd64");
  CHECK_FALSE(checks[0].ok);
  CHECK(checks[0].detail == "example/img:1: architecture is 'arm64', the seat's is amd64; ENTRYPOINT [/usr/bin/tini --] "
                            "would run before every command; no directory /sandbox/home; not found or not executable "
                            "by the agent on /usr/local/bin:/usr/bin:/bin: codex claude");
  CHECK(checks[0].remedy.find("docs/IMAGE.md") != std::string::npos);
  CHECK(checks[1].ok);  // informative only
  CHECK(checks[1].detail == "missing (sessions cannot use them): bun cargo");
}

TEST_CASE("doctor image: an unreadable root fails the contract and checks no tools") {
  ImageFacts f = good();
  f.probed = false;
  f.probe_error = "podman API: create answered 500";
  auto checks = image_contract_checks(f, "amd64");
  CHECK_FALSE(checks[0].ok);
  CHECK(checks[0].detail == "localhost/agent-sandbox:latest: its root could not be read: podman API: create answered 500");
  CHECK(checks[1].detail == "not checked");
  ImageFacts none;  // an inspect answer that is not an object leaves the platform empty: a breach
  read_image_config(nlohmann::json::array(), none);
  none.probed = true;
  CHECK_FALSE(image_contract_checks(none, "amd64")[0].ok);
}
