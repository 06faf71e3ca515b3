// gVisor's log source without runsc: the FIFO in a bundle dir (launcher/podman/sentry_log_fifo.h)
// and the recorder reading it (SeccompRecorder::adopt_sentry_log). Each refusal with no failure
// path left untested: no bundle dir, something already at the FIFO's place (left as it was), a
// log that never speaks (233 after 2 s), and what the writer wrote before it closed is counted.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launcher/lifecycle/seccomp_recorder.h"
#include "launcher/podman/sentry_log_fifo.h"
#include "plan_fixtures.h"

using namespace asbx;
using asbx::test::error_of;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/asbx-sentry-fifo-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

nlohmann::json inspect_of(const std::string& dir) { return {{"StaticDir", dir}}; }

LaunchPlan gvisor_plan() {
  LaunchPlan p;
  p.seccomp.path = "/unused";
  p.seccomp.sentry_log = true;
  return p;
}

}  // namespace

TEST_CASE("sentry log FIFO: made 0600 in the bundle, its read end non-blocking") {
  TempDir d;
  UniqueFd fd = open_sentry_log_fifo(inspect_of(d.path));
  struct stat st {};
  REQUIRE(::stat((d.path + "/asbx-sentry.log").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK((st.st_mode & 07777) == 0600);
  CHECK((::fcntl(fd.get(), F_GETFL) & O_NONBLOCK) != 0);
}

TEST_CASE("sentry log FIFO: no bundle dir in the inspect, or something at its place: refused, nothing changed") {
  CHECK(error_of([] { open_sentry_log_fifo(nlohmann::json::object()); }, ErrorKind::seccomp_unavailable) ==
        "gVisor: the sentry's log for the seccomp recorder: podman's inspect names no bundle directory (StaticDir); "
        "nothing was started");
  TempDir d;
  std::string place = d.path + "/asbx-sentry.log";
  REQUIRE(::symlink("/etc/passwd", place.c_str()) == 0);
  CHECK(error_of([&] { open_sentry_log_fifo(inspect_of(d.path)); }, ErrorKind::seccomp_unavailable) ==
        "gVisor: the sentry's log for the seccomp recorder: mkfifo " + place + ": File exists; nothing was started");
  CHECK(std::filesystem::read_symlink(place) == "/etc/passwd");  // left as it was, never followed
}

TEST_CASE("sentry log recorder: a log that never speaks refuses the session (233) after 2 s") {
  TempDir d;
  UniqueFd fd = open_sentry_log_fifo(inspect_of(d.path));
  UniqueFd writer(::open((d.path + "/asbx-sentry.log").c_str(), O_WRONLY | O_CLOEXEC));  // opened, silent
  SeccompRecorder rec;
  CHECK(error_of([&] { rec.adopt_sentry_log(std::move(fd), false, nullptr, "/run/x.sock", "/usr/libexec/w"); },
                 ErrorKind::seccomp_unavailable) ==
        "gVisor: the sentry did not open its log for the seccomp recorder: the podman service at /run/x.sock did not "
        "run the sandbox through /usr/libexec/w (its containers.conf must name it); nothing was started");
  rec.stop();
}

TEST_CASE("sentry log recorder: what the sentry wrote before it closed its log is counted") {
  TempDir d;
  UniqueFd fd = open_sentry_log_fifo(inspect_of(d.path));
  UniqueFd writer(::open((d.path + "/asbx-sentry.log").c_str(), O_WRONLY | O_CLOEXEC));
  std::string log = "{\"msg\":\"***\",\"level\":\"info\",\"time\":\"t\"}\n";
  for (long nr : {long(SYS_keyctl), long(SYS_socket), long(SYS_unshare)})
    log += "{\"msg\":\"[   2:   2] Syscall " + std::to_string(nr) + ": denied by seccomp\",\"level\":\"debug\",\"time\":\"t\"}\n";
  REQUIRE(::write(writer.get(), log.data(), log.size()) == ssize_t(log.size()));
  SeccompRecorder rec;
  rec.adopt_sentry_log(std::move(fd), false, nullptr, "s", "r");
  writer = UniqueFd();  // the sandbox ended
  rec.stop();
  nlohmann::json j = rec.json(gvisor_plan());
  CHECK(j["source"] == "sentry_log");
  CHECK(j["calls"] == nlohmann::json{{"keyctl", 1}, {"unshare", 1}});
  CHECK(j["unattributed"] == nlohmann::json{{"socket", 1}});
  CHECK(j["first"] == "keyctl");
}
