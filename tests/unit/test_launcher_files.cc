// Files the launcher writes at a caller's path (launcher/lifecycle/safe_files.h) and what --network may
// reach (launcher/netns_check.h): the parts that need no root and no namespace of their own.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <optional>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/config.h"
#include "launcher/podman/create_lock.h"
#include "base/error.h"
#include "plan/netns_check.h"
#include "launcher/lifecycle/safe_files.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {
using asbx::test::TempDir;

std::string reach_refusal(const std::string& spec, const SeatConfig& seat = {}) {
  try {
    check_network_reach(spec, seat, "--network");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("a file put beside a planted symlink or hardlink replaces the name, never the target") {
  TempDir t;
  std::ofstream(t.dir / "victim") << "precious";
  fs::create_symlink(t.dir / "victim", t.dir / "status.json");
  fs::create_hard_link(t.dir / "victim", t.dir / "capture.log");
  for (const char* name : {"status.json", "capture.log"}) {
    ReplacingFile file(t.s(name), 0600);
    REQUIRE(file.fd() >= 0);
    std::vector<std::string> beside;
    for (const auto& e : fs::directory_iterator(t.dir)) beside.push_back(e.path().filename().string());
    CHECK(std::count_if(beside.begin(), beside.end(), [&](const std::string& n) {
            return n.rfind(std::string(name) + ".tmp.", 0) == 0 && n.size() == std::string(name).size() + 5 + 16;
          }) == 1);  // 16 random hex digits
    CHECK(::write(file.fd(), "new", 3) == 3);
    CHECK(file.put_in_place());
    CHECK(t.read(name) == "new");
    CHECK(!fs::is_symlink(t.dir / name));
  }
  CHECK(t.read("victim") == "precious");
  CHECK(fs::hard_link_count(t.dir / "victim") == 1);
  {
    ReplacingFile unplaced(t.s("left.json"), 0600);  // a temp file never put in place is removed
    REQUIRE(unplaced.fd() >= 0);
  }
  CHECK_FALSE(fs::exists(t.dir / "left.json"));
  CHECK(std::distance(fs::directory_iterator(t.dir), fs::directory_iterator()) == 3);
  ReplacingFile missing(t.s("no/such/dir/f"), 0600);
  CHECK(missing.fd() == -1);
  CHECK(missing.why() == "cannot open '" + t.s("no") + "': No such file or directory");
}

TEST_CASE("the ledger is appended to only when it is a regular file with one link of the launcher's uid") {
  TempDir t;
  std::string why;
  int fd = open_append_owned(t.s("ledger"), false, why);  // created when absent
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(t.dir / "victim") << "precious";
  fs::create_symlink(t.dir / "victim", t.dir / "via-symlink");
  fs::create_hard_link(t.dir / "victim", t.dir / "via-hardlink");
  ::mkfifo(t.s("fifo").c_str(), 0600);
  CHECK(open_append_owned(t.s("via-symlink"), false, why) == -1);
  CHECK(why == "it is a symlink (refused)");
  why.clear();
  CHECK(open_append_owned(t.s("via-hardlink"), false, why) == -1);
  CHECK(why == "it has 2 hard links (refused)");
  why.clear();
  CHECK(open_append_owned(t.s("fifo"), false, why) == -1);  // no reader: never blocks
  CHECK(!why.empty());
  CHECK(t.read("victim") == "precious");
  CHECK(open_append_owned(t.s("made/for/it/ledger"), false, why) == -1);
  fd = open_append_owned(t.s("made/for/it/ledger"), true, why);
  CHECK(fd >= 0);
  ::close(fd);
}

TEST_CASE("--network reaches only /run/netns/NAME or what the seat config lists") {
  const std::string outside = "only namespaces directly in /run/netns/ or listed in the seat config's netns_allowed";
  for (const char* path : {"/proc/self/ns/net", "/proc/1/ns/net", "/var/run/netns/x", "/run/netns/a/b", "/tmp/ns"})
    CHECK(reach_refusal(std::string("ns:") + path) == std::string("--network: 'ns:") + path + "' is refused: " + outside);
  CHECK(reach_refusal("ns:/run/netns/asbx-unit-absent") == "accepted");  // podman refuses a missing one itself
  CHECK(reach_refusal("container:proxy") ==
        "--network: 'container:proxy' is refused: only containers listed in the seat config's network_containers");
  SeatConfig seat;
  seat.path = "/etc/seat.toml";
  seat.network_containers = {"proxy"};
  seat.netns_allowed = {"/tmp/ns"};
  CHECK(reach_refusal("container:proxy", seat) == "accepted");
  CHECK(reach_refusal("ns:/tmp/ns", seat) == "accepted");
  CHECK(reach_refusal("container:other", seat) ==
        "--network: 'container:other' is refused: only containers listed in the seat config's network_containers "
        "(/etc/seat.toml)");
  CHECK(reach_refusal("host") ==
        "--network: 'host' is refused: it would give the agent the seat's own network stack; use none, "
        "ns:/run/netns/NAME, container:NAME or slirp4netns");
  auto seat_toml = parse_seat_config("netns_allowed = [\"/a\"]\nnetwork_containers = [\"b\"]\n", "s.toml", UserFacts{});
  CHECK(seat_toml.netns_allowed == std::vector<std::string>{"/a"});
  CHECK(seat_toml.network_containers == std::vector<std::string>{"b"});
}

TEST_CASE("rootless creates take turns: a second CreateLock waits, and gives up naming the file") {
  TempDir t;
  std::optional<CreateLock> first(std::in_place, t.s("run"), 1000);
  CHECK(fs::exists(t.dir / "run" / ".create.lock"));
  try {
    CreateLock second(t.s("run"), 50);  // flock locks belong to the open file: a second open waits
    FAIL("the second lock was taken while the first held it");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::create_failed);
    CHECK(std::string(e.what()) == "another session held the create lock " + t.s("run") + "/.create.lock for 0 s");
  }
  first.reset();
  CreateLock third(t.s("run"), 0);  // free again once the holder is gone
}

TEST_CASE("a create lock planted as a symlink is refused, never followed") {
  TempDir t;
  std::ofstream(t.dir / "victim") << "precious";
  fs::create_directories(t.dir / "run");
  fs::create_symlink(t.dir / "victim", t.dir / "run" / ".create.lock");
  try {
    CreateLock lock(t.s("run"), 0);
    FAIL("a symlinked lock file was opened");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::create_failed);
    CHECK(std::string(e.what()) == "cannot open the create lock " + t.s("run") + "/.create.lock: Too many levels of symbolic links");
  }
  CHECK(t.read("victim") == "precious");
}
