// The warm pool's claim (launcher/podman/pool_claim.h) against the real kernel: of 8 processes
// claiming one member at once exactly one wins, and the file names the winner from the start.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "launcher/podman/pool_claim.h"

using namespace asbx;

namespace {

const std::string kMember(64, 'a');

struct PoolDir {
  std::string path;
  int fd = -1;
  PoolDir() {
    char tmpl[] = "/tmp/asbx-pool-claim-XXXXXX";
    path = ::mkdtemp(tmpl);
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~PoolDir() {
    ::close(fd);
    std::filesystem::remove_all(path);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& e : std::filesystem::directory_iterator(path)) out.push_back(e.path().filename());
    return out;
  }
};

// Forks n claimers that start together (one pipe closed releases them all); returns the pids that won.
std::vector<pid_t> race(const PoolDir& dir, int n) {
  int gate[2];
  REQUIRE(::pipe(gate) == 0);
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(gate[1]);
      char c;
      (void)::read(gate[0], &c, 1);
      bool won = claim_member(dir.fd, kMember, {static_cast<long>(::getpid()), 1000 + i});
      ::_exit(won ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  std::vector<pid_t> won;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) won.push_back(pid);
  }
  return won;
}

}  // namespace

TEST_CASE("of 8 concurrent claims of one member exactly one wins, and the file names it") {
  for (int round = 0; round < 20; ++round) {
    PoolDir dir;
    auto won = race(dir, 8);
    REQUIRE(won.size() == 1);
    auto claim = read_claim(dir.fd, kMember);
    REQUIRE(claim.has_value());
    CHECK(claim->pid == won[0]);
    CHECK(dir.names() == std::vector<std::string>{kMember + ".claim"});  // no temporary left
  }
}

TEST_CASE("a second claim after the first loses; a claim file is 0600") {
  PoolDir dir;
  CHECK(claim_member(dir.fd, kMember, {42, 7}));
  CHECK_FALSE(claim_member(dir.fd, kMember, {43, 8}));
  auto claim = read_claim(dir.fd, kMember);
  REQUIRE(claim.has_value());
  CHECK(claim->pid == 42);
  CHECK(claim->started_unix == 7);
  struct stat st {};
  REQUIRE(::fstatat(dir.fd, (kMember + ".claim").c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0);
  CHECK((st.st_mode & 07777) == 0600);
}

TEST_CASE("a member id that is not a container id is refused; a symlinked claim is never read") {
  PoolDir dir;
  try {
    claim_member(dir.fd, "../escape", {1, 1});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::internal);
    CHECK(std::string(e.what()) == "warm pool claim: '../escape' is not a container id");
  }
  CHECK(dir.names().empty());
  std::string other(64, 'b');
  REQUIRE(::symlinkat("/etc/hostname", dir.fd, (other + ".claim").c_str()) == 0);
  CHECK_FALSE(read_claim(dir.fd, other).has_value());
  CHECK_FALSE(claim_member(dir.fd, other, {1, 1}));  // the name is taken: a symlink is no way in
}
