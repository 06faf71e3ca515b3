// Persistent sessions, pure parts: the attach socket's frames, the detach keys, the screen tail, who
// may attach, the plan's rules for --persist, what ps says.
#include <doctest/doctest.h>

#include <functional>

#include "base/error.h"
#include "base/request.h"
#include "launcher/podman/gc.h"
#include "launcher/podman/spec.h"
#include "persist/keys.h"
#include "persist/screen.h"
#include "persist/wire.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "tests/unit/plan_fixtures.h"

using namespace asbx;
using namespace asbx::test;
using nlohmann::json;

namespace {


Request persistent(const std::string& id = "p1") {
  Request r;
  r.id = id;
  r.tty = true;
  r.persist = true;
  r.timeout = "8h";
  r.argv = {"claude"};
  return r;
}

std::vector<Frame> frames_of(const std::string& bytes, std::size_t piece) {
  WireReader r;
  std::vector<Frame> out;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    r.feed(bytes.data() + at, std::min(piece, bytes.size() - at));
    while (auto f = r.next()) out.push_back(*f);
  }
  return out;
}

}  // namespace

TEST_CASE("attach frames: encoded, read back whole or byte by byte") {
  std::string bytes = encode_frame(FrameType::hello, R"({"op":"attach"})") + encode_frame(FrameType::data, "") +
                      encode_frame(FrameType::data, std::string("\0\x10x", 3)) + encode_winch(50, 200);
  CHECK(bytes.substr(0, 5) == std::string("H\0\0\0\x0f", 5));
  for (std::size_t piece : {bytes.size(), std::size_t{1}, std::size_t{3}}) {
    auto f = frames_of(bytes, piece);
    REQUIRE(f.size() == 4);
    CHECK(f[0].type == FrameType::hello);
    CHECK(f[0].payload == R"({"op":"attach"})");
    CHECK(f[1].payload.empty());
    CHECK(f[2].payload == std::string("\0\x10x", 3));
    CHECK(decode_winch(f[3].payload) == std::make_pair(50, 200));
  }
  CHECK_FALSE(decode_winch(std::string(4, '\0')).has_value());
  CHECK_FALSE(decode_winch("abc").has_value());
}

TEST_CASE("attach frames: an unknown type or a length past the limit ends the reading") {
  WireReader unknown;
  unknown.feed("Z\0\0\0\0", 5);
  CHECK_FALSE(unknown.next().has_value());
  CHECK(unknown.bad());
  WireReader huge;
  std::string head("D\x00\x10\x00\x01", 5);  // 1 MiB + 1
  huge.feed(head.data(), head.size());
  CHECK_FALSE(huge.next().has_value());
  CHECK(huge.bad());
  CHECK(huge.buffered() == 0);
  WireReader partial;
  partial.feed("D\0\0\0\x05" "ab", 7);
  CHECK_FALSE(partial.next().has_value());
  CHECK_FALSE(partial.bad());
}

TEST_CASE("detach keys: ctrl-p ctrl-q detaches, a lone ctrl-p passes on, across reads") {
  DetachScanner s;
  bool detach = false;
  CHECK(s.feed("ab", 2, detach) == "ab");
  CHECK_FALSE(detach);
  CHECK(s.feed("c\x10", 2, detach) == "c");  // held: the next byte decides
  CHECK(s.feed("x", 1, detach) == "\x10x");
  CHECK(s.feed("\x10\x10", 2, detach) == "\x10");
  CHECK(s.feed("\x11rest", 5, detach) == "");
  CHECK(detach);
  DetachScanner t;
  CHECK(t.feed("hi\x10\x11" "after", 9, detach) == "hi");
  CHECK(detach);
}

TEST_CASE("the screen tail keeps the last bytes, replayed from a line start once cut") {
  ScreenTail tail(16);
  tail.append("abc\n", 4);
  CHECK(tail.replay() == "abc\n");
  tail.append("0123456789\nXYZ", 14);  // 18 bytes: the front is cut
  CHECK(tail.size() == 16);
  CHECK(tail.replay() == "0123456789\nXYZ");  // kept: "c\n0123456789\nXYZ"
  std::string big(40, 'q');
  tail.append(big.data(), big.size());
  CHECK(tail.replay() == std::string(16, 'q'));  // no line start: all of it
  ScreenTail real;
  std::string screenful(200 * 1024, 'x');
  real.append(screenful.data(), screenful.size());
  CHECK(real.size() == kScreenBytes);
}

TEST_CASE("who may attach: the seat user who started the session, and root") {
  CHECK(may_attach(1000, 1000));
  CHECK(may_attach(0, 1000));
  CHECK(may_attach(0, 0));
  CHECK_FALSE(may_attach(1001, 1000));
  CHECK_FALSE(may_attach(1000, 0));
}

TEST_CASE("--persist: needs --tty and --timeout, labels the container, names its attach socket") {
  SeatConfig seat = parse_seat_config("runtime_dir = \"/run/asbx\"\n", "seat.toml", root_user());
  LaunchPlan plan = build_plan(persistent(), seat, root_user(), fixed_facts());
  CHECK(plan.persist);
  CHECK(plan.attach_socket == "/run/asbx/p1/attach.sock");
  CHECK(plan.labels.at("agent-sandbox.persist") == "1");
  CHECK(plan.labels.at("agent-sandbox.timeout-ms") == "28800000");
  CHECK(plan_json(plan)["attach_socket"] == "/run/asbx/p1/attach.sock");
  CHECK(create_body(plan)["terminal"] == true);
  Request no_tty = persistent();
  no_tty.tty = false;
  CHECK(error_of([&] { build_plan(no_tty, seat, root_user(), fixed_facts()); }, ErrorKind::usage) ==
        "--persist needs --tty: a persistent session is a terminal to come back to");
  Request no_timeout = persistent();
  no_timeout.timeout.reset();
  CHECK(error_of([&] { build_plan(no_timeout, seat, root_user(), fixed_facts()); }, ErrorKind::usage) ==
        "--persist needs --timeout: a persistent session still ends at its timeout (e.g. --timeout 8h)");
  SeatConfig deep = parse_seat_config("runtime_dir = \"/run/" + std::string(60, 'd') + "\"\n", "seat.toml", root_user());
  std::string id(50, 'i');
  CHECK(error_of([&] { build_plan(persistent(id), deep, root_user(), fixed_facts()); }, ErrorKind::usage) ==
        "--persist: the attach socket path '/run/" + std::string(60, 'd') + "/" + id +
            "/attach.sock' is 128 bytes, more than a unix socket's 107 (a shorter --id or runtime_dir)");
  Request plain = persistent();
  plain.persist = false;
  LaunchPlan p = build_plan(plain, seat, root_user(), fixed_facts());
  CHECK_FALSE(p.labels.count("agent-sandbox.persist"));
  CHECK(p.attach_socket.empty());
}

TEST_CASE("ps reads the persist label and says how long a session has left") {
  json entry = {{"Id", "c1"}, {"Names", {"asbx-p1"}}, {"State", "running"},
                {"Labels", {{"agent-sandbox.session", "p1"}, {"agent-sandbox.persist", "1"},
                            {"agent-sandbox.started", "1000"}, {"agent-sandbox.timeout-ms", "3600000"},
                            {"agent-sandbox.launcher-pid", "1"}, {"agent-sandbox.boot-id", "b"}}}};
  LiveSession s = session_from_list_entry(entry);
  CHECK(s.persist);
  HostFacts host{"b", 1600, [](long, std::int64_t) { return true; }};
  json row = ps_entry(s, host, "detached");
  CHECK(row["left_s"] == 3000);
  CHECK(row["terminal"] == "detached");
  CHECK(row["orphan"].is_null());
  std::string table = ps_table(json::array({row}));
  CHECK(table.find("TERMINAL") != std::string::npos);
  CHECK(table.find("detached") != std::string::npos);
  CHECK(table.find("50m") != std::string::npos);
  row["seat"] = "rd-1";
  CHECK(ps_table(json::array({row})).rfind("SEAT", 0) == 0);
}
