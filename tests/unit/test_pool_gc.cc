// gc and ps by a warm member's claim file (launcher/pool/pool_gc.h): the claim names the session's
// launcher, its timeout and its id; gc's own claim before a removal wins only over no claim.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "launcher/podman/pool_claim.h"
#include "launcher/pool/pool_gc.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

const std::string kId(64, 'a');

struct RuntimeDir {
  fs::path dir;
  RuntimeDir() {
    char tmpl[] = "/tmp/asbx-unit-poolgc-XXXXXX";
    dir = ::mkdtemp(tmpl);
    fs::create_directory(dir / ".pool");
  }
  ~RuntimeDir() { fs::remove_all(dir); }
  void claim(const PoolClaim& who) const {
    int fd = ::open((dir / ".pool").c_str(), O_RDONLY | O_DIRECTORY);
    REQUIRE(claim_member(fd, kId, who));
    ::close(fd);
  }
};

LiveSession member(const RuntimeDir& r) {
  LiveSession s;
  s.container_id = kId;
  s.session = "pool-0123456789abcdef";
  s.launcher_pid = 111;  // the keeper
  s.started_unix = 9'000;
  s.boot_id = "boot-a";
  s.pool = true;
  s.pool_runtime_dir = r.dir.string();
  return s;
}

HostFacts host() {
  return {"boot-a", 10'000, [](long pid, std::int64_t) { return pid == 222; }};  // the keeper (111) is gone
}

}  // namespace

TEST_CASE("pool gc: a claimed member is judged by its claim: the session's launcher, timeout and id") {
  RuntimeDir r;
  r.claim(PoolClaim{222, 9'500, 30'000, "s-warm"});
  LiveSession s = member(r);
  apply_pool_claim(s);
  CHECK((s.pool_claimed && s.pool_session_ran));
  CHECK(s.session == "s-warm");
  CHECK(s.pool_session == "pool-0123456789abcdef");
  CHECK(s.timeout_ms == 30'000);  // ps's TIMEOUT and gc's backstop, as a cold container's label
  CHECK(orphan_reason(s, host()) == "its timeout of 30000 ms passed 470 s ago");
  s.timeout_ms = 0;
  CHECK(orphan_reason(s, host()) == "");  // its launcher (222) lives: not the dead keeper's verdict
}

TEST_CASE("pool gc: an unclaimed member is its keeper's; gc claims it before removing it") {
  RuntimeDir r;
  LiveSession s = member(r);
  apply_pool_claim(s);
  CHECK_FALSE(s.pool_claimed);
  CHECK(orphan_reason(s, host()) == "its launcher (pid 111) is gone");
  CHECK(claim_for_removal(s));        // gc's own claim: no session can take it now
  CHECK_FALSE(claim_for_removal(s));  // a second gc does not remove it too
  LiveSession again = member(r);
  apply_pool_claim(again);
  CHECK((again.pool_claimed && !again.pool_session_ran));  // gc's claim ran no session: no ledger line
}

TEST_CASE("pool gc: a session's claim that landed after the list wins over gc's") {
  RuntimeDir r;
  LiveSession s = member(r);
  apply_pool_claim(s);  // read before the session linked its claim
  r.claim(PoolClaim{222, 9'500, 0, "s-late"});
  CHECK_FALSE(claim_for_removal(s));  // gc leaves it: the session's now
}
