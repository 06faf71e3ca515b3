// A session dir changes hands under its lock (launcher/lifecycle/session_dir.h): a launcher taking it
// waits for a gc or a leaving launcher that holds it, and makes it again when they removed it; gc's
// sweep never acts on a dir a launcher holds; a launcher leaving removes it only when no owner file
// is left in it.
#include <doctest/doctest.h>

#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/session_owner.h"
#include "launcher/lifecycle/session_dir.h"
#include "temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {

// Another holder of DIR's lock (a gc, a launcher): flock conflicts between open files, in one process too.
std::unique_ptr<UniqueFd> hold(const std::string& dir) {
  auto fd = std::make_unique<UniqueFd>(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(::flock(fd->get(), LOCK_EX) == 0);
  return fd;
}

}  // namespace

TEST_CASE("session dir: a taker waits for its holder, and makes it again when the holder removed it") {
  test::TempDir t;
  std::string dir = t.s("s");
  {
    SessionDirLock first;
    REQUIRE(first.take(dir));
    CHECK(first.made());
  }
  auto held = hold(dir);
  std::atomic<bool> released{false};
  std::thread holder([&] {
    ::usleep(100 * 1000);
    released = true;
    held.reset();  // left as it was: the taker finds it
  });
  SessionDirLock second;
  REQUIRE(second.take(dir));
  CHECK(released);
  CHECK_FALSE(second.made());
  holder.join();
  second = SessionDirLock();

  held = hold(dir);
  std::thread remover([&] {
    ::usleep(100 * 1000);
    fs::remove_all(dir);  // what gc does under the lock
    held.reset();
  });
  SessionDirLock third;
  REQUIRE(third.take(dir));
  remover.join();
  CHECK(third.made());  // the dir it waited on is gone: made again, and locked
  CHECK(fs::is_directory(dir));
}

TEST_CASE("session dir: with_session_dir_locked runs nothing while another holds it, or once it is gone") {
  test::TempDir t;
  std::string dir = t.s("s");
  fs::create_directories(dir);
  int ran = 0;
  {
    auto held = hold(dir);
    CHECK_FALSE(with_session_dir_locked(dir, 50, [&] { ++ran; }));
  }
  CHECK(with_session_dir_locked(dir, 50, [&] { ++ran; }));
  CHECK(ran == 1);
  fs::remove_all(dir);
  CHECK_FALSE(with_session_dir_locked(dir, 50, [&] { ++ran; }));
  fs::create_directory_symlink(t.s(), dir);  // a link is never followed
  CHECK_FALSE(with_session_dir_locked(dir, 50, [&] { ++ran; }));
  CHECK(ran == 1);
}

TEST_CASE("session dir: gc's sweep leaves a dir a launcher holds, and reads its owner again once it has the lock") {
  test::TempDir t;
  fs::create_directories(t.dir / "s" / "tmpfs");
  t.write("s/tmpfs/owner", "222 100 boot-1\n");  // a killed launcher's
  auto alive = [](long pid, std::int64_t) { return pid == 111; };
  {
    auto held = hold(t.s("s"));  // a new launcher of the id taking it, longer than the sweep waits
    CHECK(collect_stale_seat_tmpfs(t.s(), {}, "boot-1", alive).empty());
    CHECK(fs::exists(t.dir / "s"));
  }
  auto held = hold(t.s("s"));
  std::thread taker([&] {  // the race: it writes its owner while the sweep, having read the old one, waits
    ::usleep(50 * 1000);
    fs::remove(t.dir / "s" / "tmpfs" / "owner");
    t.write("s/tmpfs/owner", "111 100 boot-1\n");
    held.reset();
  });
  CHECK(collect_stale_seat_tmpfs(t.s(), {}, "boot-1", alive).empty());
  taker.join();
  CHECK(fs::exists(t.dir / "s" / "tmpfs" / "owner"));
  fs::remove(t.dir / "s" / "tmpfs" / "owner");
  t.write("s/tmpfs/owner", "222 100 boot-1\n");
  CHECK(collect_stale_seat_tmpfs(t.s(), {}, "boot-1", alive).size() == 1);  // free, and still a gone launcher's
  CHECK_FALSE(fs::exists(t.dir / "s"));
}

TEST_CASE("session dir: a launcher leaving removes it only when no owner file is left in it") {
  test::TempDir t;
  std::string dir = t.s("s");
  fs::create_directories(t.dir / "s" / "tmpfs" / "0");
  t.write("s/tmpfs/owner", "111 100 boot-1\n");
  t.write("s/owner", "111 100 boot-1\n");
  leave_session_dir(dir, dir + "/owner");  // the listener goes first: the seat tmpfs still holds it
  CHECK_FALSE(fs::exists(t.dir / "s" / "owner"));
  CHECK(fs::exists(t.dir / "s" / "tmpfs" / "0"));
  leave_session_dir(dir, dir + "/tmpfs/owner");
  CHECK_FALSE(fs::exists(dir));

  fs::create_directories(t.dir / "p");
  t.write("p/owner", "111 100 boot-1\n");  // a persistent session's supervisor
  t.write("p/attach.sock", "");
  leave_session_dir(t.s("p"), "");  // a listener that wrote no owner of its own
  CHECK(fs::exists(t.dir / "p" / "attach.sock"));
  fs::remove(t.dir / "p" / "owner");
  leave_session_dir(t.s("p"), "");
  CHECK(fs::exists(t.dir / "p" / "attach.sock"));  // only ever an empty dir, beyond its tmpfs
}

TEST_CASE("session dir: a seat tmpfs's owner file a killed launcher left hides no live owner beside it") {
  test::TempDir t;
  fs::create_directories(t.dir / "s" / "tmpfs" / "0");
  t.write("s/tmpfs/owner", "222 100 boot-1\n");  // a cold launcher killed with its seat tmpfs
  t.write("s/owner", "111 100 boot-1\n");        // the warm launcher of the id that took the dir since
  auto alive = [](long pid, std::int64_t) { return pid == 111; };
  DirOwners o = read_dir_owners(t.s("s"), "boot-1", alive, {});
  CHECK((o.whole && o.live == 111 && o.gone_this_boot && o.pid == 222 && !o.mine));
  CHECK(owner_holds(t.s("s"), "boot-1", alive));
  CHECK(read_dir_owners(t.s("s"), "boot-1", alive, {111, 100}).mine);
  CHECK_FALSE(read_dir_owners(t.s("s"), "boot-1", alive, {222, 99}).mine);  // a reused pid is not this launcher
  LaunchPlan plan;
  plan.session_dir = t.s("s");
  plan.labels = {{"agent-sandbox.launcher-pid", "333"}, {"agent-sandbox.boot-id", "boot-1"}};
  CHECK(session_dir_holder(plan, alive) == 111);
  CHECK(collect_stale_seat_tmpfs(t.s(), {}, "boot-1", alive).empty());
  CHECK(fs::exists(t.dir / "s" / "owner"));
}

TEST_CASE("session dir: taking a dir gone launchers left clears it; one this launcher holds is kept") {
  test::TempDir t;
  LaunchPlan plan;
  plan.session_id.assign(1, 's');  // (a literal here meets a false -Wrestrict of GCC 12)
  plan.session_dir = t.s("s");
  plan.labels = {{"agent-sandbox.launcher-pid", std::to_string(::getpid())}, {"agent-sandbox.started", "100"},
                 {"agent-sandbox.boot-id", "boot-x"}};
  fs::create_directories(t.dir / "s" / "tmpfs" / "0");
  t.write("s/tmpfs/owner", "2147483 100 boot-x\n");  // no such pid: gone
  t.write("s/seccomp.sock", "");
  {
    SessionDirLock lock;
    REQUIRE(take_session_dir(plan, lock));
    CHECK_FALSE(lock.made());
  }
  CHECK(fs::is_directory(t.dir / "s"));
  CHECK(fs::is_empty(t.dir / "s"));  // the gone launcher's owner, socket and tmpfs dir: cleared
  t.write("s/owner", std::to_string(::getpid()) + " 100 boot-x\n");  // this launcher's recorder took it first
  {
    SessionDirLock lock;
    REQUIRE(take_session_dir(plan, lock));
  }
  CHECK(fs::exists(t.dir / "s" / "owner"));  // kept
}

