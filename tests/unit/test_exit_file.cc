#include <doctest/doctest.h>

#include <string>

#include "launcher/podman/deferred_removal.h"
#include "launcher/podman/exit_file.h"
#include "launcher/podman/namesake.h"

using namespace asbx;

namespace {
std::string nul_joined(std::initializer_list<std::string> args) {
  std::string out;
  for (const auto& a : args) out += a + '\0';
  return out;
}
}  // namespace

TEST_CASE("exit_file: conmon's --exit-dir for its own container only") {
  std::string id = "4bffbecf33f8";
  std::string cmd = nul_joined({"/usr/bin/conmon", "--api-version", "1", "-c", id, "-u", id, "--exit-dir",
                                "/run/libpod/exits", "--exit-command", "/usr/bin/podman", "--exit-command-arg", "--exit-dir"});
  CHECK(conmon_exit_dir(cmd, id) == "/run/libpod/exits");
  CHECK(conmon_exit_dir(cmd, "another") == "");  // a reused pid: another container's conmon
  // after --exit-command the arguments are podman's: never read as conmon's
  CHECK(conmon_exit_dir(nul_joined({"conmon", "-c", id, "--exit-command", "x", "--exit-dir", "/tmp"}), id) == "");
  CHECK(conmon_exit_dir(nul_joined({"conmon", "-c", id, "--exit-dir", "relative"}), id) == "");
  CHECK(conmon_exit_dir("", id) == "");
}

TEST_CASE("exit_file: not armed reads nothing") {
  ExitFile f;
  CHECK(f.arm(0, "x") == "podman reported no conmon pid");
  CHECK_FALSE(f.armed());
  CHECK(f.read(10) == -1);
}

TEST_CASE("deferred_removal: the marker is read strictly") {
  RemovalMarker m = parse_removal_marker("1234 1700000000\n");
  CHECK(m.present);
  CHECK(m.pid == 1234);
  CHECK(m.started_unix == 1700000000);
  for (const char* odd : {"", "1234\n", "1234 17", "-1 5\n", "12a 5\n", "0 5\n", "1 2 3\n", "1234 1700000000"})
    CHECK_FALSE(parse_removal_marker(odd).present);
  CHECK(removal_marker_path("/run/x", "abc") == "/run/x/.removal-abc");
}

TEST_CASE("namesake: only podman's refusal of a name in use is waited on") {
  CHECK(name_in_use("podman refused to create the container (500): creating container storage: the container name "
                    "\"asbx-x\" is already in use by 0123. You have to remove that container to be able to reuse that "
                    "name: that name is already in use"));
  CHECK_FALSE(name_in_use("podman refused to create the container (500): image not known"));
  CHECK_FALSE(name_in_use(""));
}
