// A member's ready file (launcher/pool/ready.h): what its keeper writes is what a claim reads; a
// member is ready only unclaimed, of this boot, its keeper alive; anything else in the file's place
// (a symlink, a foreign shape, too large) is no member at all.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "launcher/podman/gc.h"
#include "launcher/podman/pool_claim.h"
#include "launcher/pool/ready.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

struct RuntimeDir {
  fs::path dir;
  RuntimeDir() {
    char tmpl[] = "/tmp/asbx-unit-ready-XXXXXX";
    dir = ::mkdtemp(tmpl);
    fs::create_directory(dir / ".pool");
  }
  ~RuntimeDir() { fs::remove_all(dir); }
  fs::path member_dir(const std::string& name) const {
    fs::create_directory(dir / name);
    return dir / name;
  }
};

Member keeper_here(char digit) {
  Member m;
  m.id = std::string(64, digit);
  m.digest = "sha256:d";
  m.image = "img";
  m.boot_id = current_host_facts().boot_id;
  m.keeper_pid = static_cast<long>(::getpid());  // this process: alive
  m.started_unix = static_cast<std::int64_t>(std::time(nullptr));
  m.listener_fd = 7;
  m.slot = 3;
  m.resources = R"({"memory":{"limit":1}})";
  m.init_pid = static_cast<long>(::getpid());  // this process stands for the member's init
  m.init_started = m.started_unix;
  return m;
}

}  // namespace

TEST_CASE("a ready file written by the keeper is read back as a ready member of its dir") {
  RuntimeDir r;
  REQUIRE(write_ready(r.member_dir("pool-0000000000000001").string(), keeper_here('a')) == "");
  CHECK_FALSE(fs::exists(r.dir / "pool-0000000000000001" / ".ready"));
  auto got = ready_members(r.dir.string());
  REQUIRE(got.size() == 1);
  CHECK(got[0].id == std::string(64, 'a'));
  CHECK(got[0].session == "pool-0000000000000001");
  CHECK((got[0].digest == "sha256:d" && got[0].image == "img" && got[0].listener_fd == 7 && got[0].slot == 3));
  CHECK(got[0].resources == R"({"memory":{"limit":1}})");
  CHECK(got[0].ready);
}

TEST_CASE("a claimed member, one of another boot, one whose keeper is gone and one whose init is gone are not ready") {
  RuntimeDir r;
  Member claimed = keeper_here('a'), other_boot = keeper_here('b'), gone = keeper_here('c'), removed = keeper_here('d');
  removed.init_pid = 999'999'999;  // its container removed behind the pool's back: runc's init is gone
  REQUIRE(write_ready(r.member_dir("pool-d").string(), removed) == "");
  other_boot.boot_id = "another-boot";
  gone.keeper_pid = 999'999'999;
  REQUIRE(write_ready(r.member_dir("pool-a").string(), claimed) == "");
  REQUIRE(write_ready(r.member_dir("pool-b").string(), other_boot) == "");
  REQUIRE(write_ready(r.member_dir("pool-c").string(), gone) == "");
  int pool = ::open((r.dir / ".pool").c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(claim_member(pool, claimed.id, PoolClaim{1, 1, 0, "s1"}));
  ::close(pool);
  auto got = ready_members(r.dir.string());
  CHECK(got.size() == 4);
  for (const auto& m : got) CHECK_FALSE(m.ready);
}

TEST_CASE("a symlink, a foreign shape, a bad id or an oversized file in a ready file's place is no member") {
  RuntimeDir r;
  fs::path target = r.dir / "elsewhere";
  REQUIRE(write_ready(r.member_dir("pool-real").string(), keeper_here('a')) == "");
  fs::rename(r.dir / "pool-real" / "ready", target);
  fs::create_symlink(target, r.member_dir("pool-link") / "ready");
  std::ofstream(r.member_dir("pool-shape") / "ready") << "[1,2,3]";
  std::ofstream(r.member_dir("pool-id") / "ready")
      << R"({"id":"../x","digest":"d","image":"i","boot":"b","keeper_pid":1,"started":1,"listener_fd":7,"slot":-1,"resources":{},"init_pid":1,"init_started":1})";
  std::ofstream(r.member_dir("pool-big") / "ready") << std::string(5000, ' ');
  std::ofstream(r.member_dir("not-a-member") / "ready") << "{}";
  CHECK(ready_members(r.dir.string()).empty());
}

TEST_CASE("a second write of a member's ready file while its temporary one exists fails and says where") {
  RuntimeDir r;
  fs::path dir = r.member_dir("pool-x");
  std::ofstream(dir / ".ready") << "";
  CHECK(write_ready(dir.string(), keeper_here('a')) == "cannot write " + (dir / ".ready").string());
}
