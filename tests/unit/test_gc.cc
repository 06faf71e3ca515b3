#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>

#include "launcher/lifecycle/runtime_dir.h"
#include "launcher/podman/gc.h"

using namespace asbx;

namespace {

HostFacts host(bool alive) {
  return {"boot-a", 10'000, [alive](long, std::int64_t) { return alive; }};
}

LiveSession session(std::int64_t timeout_ms = 0) {
  LiveSession s;
  s.session = "x";
  s.launcher_pid = 123;
  s.boot_id = "boot-a";
  s.started_unix = 9'000;
  s.timeout_ms = timeout_ms;
  return s;
}

}  // namespace

TEST_CASE("gc keeps a live session and removes one whose launcher is gone") {
  CHECK(orphan_reason(session(), host(true)) == "");
  CHECK(orphan_reason(session(), host(false)) == "its launcher (pid 123) is gone");
}

TEST_CASE("gc removes a container from an earlier boot and one past its timeout plus slack") {
  LiveSession s = session();
  s.boot_id = "boot-old";
  CHECK(orphan_reason(s, host(true)) == "the seat rebooted since its launch (boot id boot-old)");
  CHECK(orphan_reason(session(940'000), host(true)) == "");  // 9000 + 940 + 60 = 10000: not yet
  CHECK(orphan_reason(session(900'000), host(true)) == "its timeout of 900000 ms passed 100 s ago");
}

TEST_CASE("containers without launcher labels are never judged") {
  LiveSession s = session();
  s.launcher_pid = 0;
  CHECK(orphan_reason(s, host(false)) == "");
  s = session();
  s.boot_id.clear();
  CHECK(orphan_reason(s, host(false)) == "");
}

TEST_CASE("a podman list entry becomes a session") {
  auto entry = nlohmann::json::parse(R"({"Id":"abc","Names":["asbx-x"],"State":"running","Labels":{
    "agent-sandbox.session":"x","agent-sandbox.owner":"root","agent-sandbox.started":"9000",
    "agent-sandbox.launcher-pid":"123","agent-sandbox.boot-id":"boot-a","agent-sandbox.timeout-ms":"2000"}})");
  LiveSession s = session_from_list_entry(entry);
  CHECK(s.container_id == "abc");
  CHECK(s.container_name == "asbx-x");
  CHECK(s.state == "running");
  CHECK(s.owner == "root");
  CHECK(s.started_unix == 9000);
  CHECK(s.launcher_pid == 123);
  CHECK(s.timeout_ms == 2000);
  CHECK(session_from_list_entry(nlohmann::json::parse(R"({"Id":"b","Labels":null})")).launcher_pid == 0);
}

TEST_CASE("odd labels make a container unjudgeable, never a crash or a guess") {
  auto entry = [](const std::string& labels) {
    return session_from_list_entry(nlohmann::json::parse(R"({"Id":"abc","Names":["asbx-x"],"Labels":)" + labels + "}"));
  };
  LiveSession s = entry(R"({"agent-sandbox.launcher-pid":"12abc","agent-sandbox.boot-id":"boot-a"})");
  CHECK(s.odd == "label agent-sandbox.launcher-pid is '12abc', not a number");
  CHECK(orphan_reason(s, host(false)) == "");
  CHECK(entry(R"({"agent-sandbox.launcher-pid":"-5"})").odd == "label agent-sandbox.launcher-pid is '-5', not a number");
  CHECK(entry(R"({"agent-sandbox.started":7})").odd == "label agent-sandbox.started is '7', not a number");
  CHECK(entry(R"({"agent-sandbox.timeout-ms":"99999999999999999999"})").odd ==
        "label agent-sandbox.timeout-ms is '99999999999999999999', not a number");
  CHECK(entry(R"({"agent-sandbox.launcher-pid":"9999999999"})").odd ==
        "label agent-sandbox.launcher-pid is 9999999999, past any pid");
  CHECK(session_from_list_entry(nlohmann::json::parse(R"({"Id":"abc","Names":[7],"Labels":{}})")).odd ==
        "podman listed it without a name");
  CHECK(session_from_list_entry(nlohmann::json::parse(R"({"Id":5,"Names":null,"State":1,"Labels":"x"})")).odd ==
        "podman listed it without an Id");
  CHECK(session_from_list_entry(nlohmann::json::parse(R"([1,2])")).odd == "podman listed it without an Id");
  CHECK(entry(R"({"agent-sandbox.launcher-pid":"123"})").odd == "");
}

TEST_CASE("an orphan gc removed gets the ledger line its killed launcher could not write") {
  LiveSession s = session();
  s.container_id = "abc";
  auto rec = orphan_record(s, "its launcher (pid 123) is gone");
  CHECK(rec == nlohmann::json::parse(R"({"id":"x","outcome":"killed","exit_code":null,"agent_exit_code":null,
    "error_kind":null,"message":"removed by gc: its launcher (pid 123) is gone","failed":"killed",
    "cause":"orphaned","container_id":"abc","container_removed":true,"started_unix":9000})"));
  CHECK(rec.dump().find(orphan_line_key("abc")) != std::string::npos);  // as the ledger holds it
  rec["cause"] = nullptr;  // a launcher's own line for the container: not the orphan's
  CHECK(rec.dump().find(orphan_line_key("abc")) == std::string::npos);
}

TEST_CASE("seat configs sharing one service each judge their own sessions") {
  auto exists = [](const std::string& dir) { return dir == "/run/b" || dir == "/run/a"; };
  LiveSession s = session();
  CHECK(session_runtime_dir(s, "/run/a") == "/run/a");  // made before the label: judged by any seat
  CHECK_FALSE(judged_elsewhere(s, "/run/a", exists));
  s.runtime_dir = "/run/b";
  CHECK(session_runtime_dir(s, "/run/a") == "/run/b");
  CHECK(judged_elsewhere(s, "/run/a", exists));  // seat b's gc: its removal markers, its ledger
  CHECK_FALSE(judged_elsewhere(s, "/run/b", exists));
  s.runtime_dir = "/run/gone";  // a seat taken down has no gc left: any seat's takes its orphans
  CHECK_FALSE(judged_elsewhere(s, "/run/a", exists));
  s.runtime_dir = "relative";  // never a path relative to gc's own working dir
  CHECK(session_runtime_dir(s, "/run/a") == "/run/a");
  s.pool = true;  // a member: its pool label says
  s.runtime_dir = "/run/a";
  s.pool_runtime_dir = "/run/b";
  CHECK(judged_elsewhere(s, "/run/a", exists));
  CHECK(session_from_list_entry({{"Labels", {{"agent-sandbox.runtime-dir", "/run/b"}}}}).runtime_dir == "/run/b");
}

TEST_CASE("a seat whose config file was deleted has no gc of its own, though its runtime dir stays") {
  auto exists = [](const std::string& p) { return p == "/run/a" || p == "/run/b" || p == "/home/b/seat.toml"; };
  LiveSession s = session();
  s.runtime_dir = "/run/b";
  s.seat_config = "/home/b/seat.toml";
  CHECK(judged_elsewhere(s, "/run/a", exists));  // both there: seat b's
  s.seat_config = "/home/b/deleted.toml";
  CHECK_FALSE(judged_elsewhere(s, "/run/a", exists));  // a mount keeps /run/b, nothing names it
  CHECK_FALSE(judged_elsewhere(s, "/run/b", exists));  // its own
  s.seat_config = "relative.toml";  // never a path relative to gc's own working dir: as unlabelled
  CHECK(judged_elsewhere(s, "/run/a", exists));
  CHECK(session_from_list_entry({{"Labels", {{"agent-sandbox.seat-config", "/x/seat.toml"}}}}).seat_config == "/x/seat.toml");
}

TEST_CASE("an idle member of a deleted seat is gc's, though its keeper lives") {
  auto exists = [](const std::string& p) { return p == "/home/b/seat.toml"; };
  LiveSession s = session();
  s.pool = true;
  s.seat_config = "/home/b/gone.toml";
  CHECK(idle_member_of_a_deleted_seat(s, exists) == "its seat config /home/b/gone.toml is gone (no claim or fill of that seat is left)");
  s.pool_claimed = true;  // a session runs in it
  CHECK(idle_member_of_a_deleted_seat(s, exists).empty());
  s.pool_claimed = false;
  s.seat_config = "/home/b/seat.toml";
  CHECK(idle_member_of_a_deleted_seat(s, exists).empty());
  s.seat_config = "";  // a seat without a file, or made before the label
  CHECK(idle_member_of_a_deleted_seat(s, exists).empty());
  s.pool = false, s.seat_config = "/home/b/gone.toml";  // a session: its launcher decides (orphan_reason)
  CHECK(idle_member_of_a_deleted_seat(s, exists).empty());
}

TEST_CASE("another seat's runtime dir is read beneath a walk that trusts only root's and this user's dirs") {
  namespace fs = std::filesystem;
  fs::path run = fs::temp_directory_path() / ("asbx-trust-" + std::to_string(::getpid()));
  fs::remove_all(run);
  std::string why = "x";
  CHECK_FALSE(open_trusted_dir(run.string(), why));
  CHECK(why.empty());  // not there: nothing can be read beneath it
  fs::create_directories(run / "run");
  fs::permissions(run, fs::perms::owner_all);
  fs::permissions(run / "run", fs::perms::owner_all);
  CHECK(open_trusted_dir((run / "run").string() + "/", why));
  fs::permissions(run, fs::perms::others_write, fs::perm_options::add);  // a component others may write
  CHECK_FALSE(open_trusted_dir((run / "run").string(), why));
  CHECK(why == run.string() + " may be written by others (mode 0702)");
  fs::permissions(run, fs::perms::sticky_bit, fs::perm_options::add);  // as /tmp: only an entry's owner moves it
  CHECK(open_trusted_dir((run / "run").string(), why));
  fs::permissions(run, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(run / "run", run / "link");
  CHECK_FALSE(open_trusted_dir((run / "link").string(), why));
  CHECK(why == (run / "link").string() + " is a link or not a directory");
  CHECK_FALSE(open_trusted_dir((run / "run" / ".." / "run").string(), why));
  CHECK_FALSE(open_trusted_dir("relative/run", why));
  fs::remove_all(run);
}
