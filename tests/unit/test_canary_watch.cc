// The decoy watch with real inotify on a directory of the test's own: what trips under runc (an
// open) and under gVisor (a read, or a second open held beside the gofer's walk).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include "launcher/wall/canary_watch.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
using namespace asbx::test;

namespace {

const std::string kKey = ".ssh/id_ed25519";

struct Watched {
  TempDir t;
  UniqueFd home{::open(t.s().c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC)};
  CanaryWatch watch;
  explicit Watched(bool on_read) {
    TripwirePlan plan;
    plan.canaries = {kKey};
    watch.arm(home.get(), plan, "mark", false, 0, 0, on_read);
  }
  std::vector<std::string> seen() {
    std::vector<std::string> out;
    watch.drain([&](const std::string& path) { out.push_back(path); });
    return out;
  }
  int open_key(int flags = O_RDONLY) { return ::open(t.s(kKey).c_str(), flags | O_CLOEXEC); }
};

}  // namespace

TEST_CASE("canary watch (runc): the first open of a decoy trips") {
  Watched w(false);
  int fd = w.open_key(O_RDONLY | O_NONBLOCK);
  CHECK(w.seen() == std::vector<std::string>{kKey});
  ::close(fd);
}

TEST_CASE("canary watch (gVisor): the gofer's held open is no trip; an open beside it is, as a mapping would read it") {
  Watched w(true);
  int walk = w.open_key(O_RDONLY | O_NONBLOCK);  // what a `stat` makes the gofer do
  CHECK(w.seen().empty());
  int mapped = w.open_key();  // the sentry's handle for the agent's open: it maps it, no read follows
  CHECK(w.seen() == std::vector<std::string>{kKey});
  ::close(mapped);
  ::close(walk);
  CHECK(w.seen().empty());
}

TEST_CASE("canary watch (gVisor): walks that come and go never add up to a trip") {
  Watched w(true);
  for (int i = 0; i < 3; ++i) ::close(w.open_key(O_RDONLY | O_NONBLOCK));  // the sentry evicted it, walked again
  CHECK(w.seen().empty());
}

TEST_CASE("canary watch (gVisor): a read alone trips") {
  Watched w(true);
  int fd = w.open_key();
  CHECK(w.seen().empty());
  char c;
  REQUIRE(::read(fd, &c, 1) == 1);
  CHECK(w.seen() == std::vector<std::string>{kKey});
  ::close(fd);
}
