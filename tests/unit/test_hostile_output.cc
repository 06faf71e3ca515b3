// The launcher under a hostile agent's output, paths and requests (docs/THREATS.md, "The
// launcher's own streams, files and forwarding"): the pure and fd-level parts. The real
// sessions are tests/integration/test_hostile_output.py.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir_walk.h"
#include "egress/http_forward.h"
#include "launcher/lifecycle/diagnostics.h"
#include "launcher/lifecycle/output_sink.h"
#include "launcher/lifecycle/safe_files.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;
using asbx::test::TempDir;

namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    r = fds[0], w = fds[1];
    ::fcntl(r, F_SETFL, O_NONBLOCK);
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  std::string read_all() {
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = ::read(r, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
  std::size_t read_up_to(std::size_t limit) {
    char buf[65536];
    ssize_t n = ::read(r, buf, std::min(limit, sizeof buf));
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
};

std::int64_t fake_now = 0;
std::int64_t fake_clock() { return fake_now; }

int count_lines(const std::string& s, const std::string& needle) {
  int n = 0;
  for (auto at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

ForwardPlan forward_plan(const std::string& raw) {
  RequestHead h = parse_request_head(raw);
  REQUIRE(h.status == RequestHead::Status::ok);
  return plan_forward(h, destination_of(h));
}

std::string refusal_of(const std::string& raw) { return forward_plan(raw).refusal.value_or("forwarded"); }

struct Framed {
  std::string out;
  std::size_t used = 0;
  BodyFramer::Status status;
};

Framed frame(BodyFraming f, const std::string& in) {
  BodyFramer b(f);
  Framed r;
  r.used = b.feed(in, r.out);
  r.status = b.status();
  return r;
}

const BodyFraming kChunked{BodyFraming::Kind::chunked, 0};

}  // namespace

TEST_CASE("under steady back-pressure the sink holds at most twice what is pending, not all it ever took") {
  Pipe p;
  OutputSink sink(p.w);
  const std::string chunk(64 * 1024, 'x');
  std::size_t most = 0, total = 0;
  for (int round = 0; round < 6000; ++round) {  // > 200 MiB through a reader slower than the writer
    if (sink.pending() < 256 * 1024) sink.push(chunk.data(), chunk.size()), total += chunk.size();
    p.read_up_to(48 * 1024);
    sink.flush(true);
    most = std::max(most, sink.held());
  }
  CHECK(total > 200u * 1024 * 1024);
  CHECK(most <= 2 * (256 + 64) * 1024);
}

TEST_CASE("diagnostics never block on a stderr nobody reads, and say what they dropped") {
  Pipe p;
  fake_now = 0;
  Diagnostics d(p.w, fake_clock);
  const std::string line = "agent-sandbox: egress: refused " + std::string(900, 'a') + ".example:443: not_allowed";
  for (int i = 0; i < 1500; ++i) d.say(line);  // the pipe holds 64 KiB: this would block a plain write
  CHECK(d.dropped() == 1500 - Diagnostics::kBurst);
  CHECK_FALSE(d.flush(0));  // nobody reads: nothing waits
  std::string got = p.read_all();
  CHECK(got.size() <= 64 * 1024);
  CHECK(got.size() % (line.size() + 1) == 0);  // whole lines only
  fake_now = 1000;  // a second later: room again, and the count comes first
  d.say("agent-sandbox: warning: the next one");
  CHECK(d.flush(1000));
  got += p.read_all();
  CHECK(count_lines(got, "refused") == Diagnostics::kBurst);  // what was admitted all went out, in order
  CHECK(got.find("unit-tests: 1400 diagnostic line(s) dropped (too many at once, or stderr not read); the status "
                 "record keeps the counts\nagent-sandbox: warning: the next one\n") != std::string::npos);
  CHECK(got.substr(got.size() - 37) == "agent-sandbox: warning: the next one\n");
}

TEST_CASE("diagnostics pass a burst, then a steady rate, each line whole and at most kMaxLine bytes") {
  Pipe p;
  fake_now = 0;
  Diagnostics d(p.w, fake_clock);
  for (int i = 0; i < Diagnostics::kBurst; ++i) d.say("line");
  d.say("dropped");
  fake_now = 500;  // half a second: kPerSecond / 2 more
  for (int i = 0; i < 10; ++i) d.say("later");
  d.say(std::string(5000, 'y'));
  std::string got = p.read_all();
  CHECK(count_lines(got, "line\n") == Diagnostics::kBurst);
  CHECK(count_lines(got, "dropped\n") == 0);
  CHECK(got.find("unit-tests: 1 diagnostic line(s) dropped") != std::string::npos);  // before the next line, in this program's name
  CHECK(count_lines(got, "later\n") == Diagnostics::kPerSecond / 2);
  CHECK(count_lines(got, "yyy") == 0);  // over the rate
  CHECK(d.dropped() == 1 + 10 - Diagnostics::kPerSecond / 2 + 1);
  fake_now = 10'000;
  d.say(std::string(5000, 'z'));
  got = p.read_all();
  CHECK(got.find("diagnostic line(s) dropped") != std::string::npos);
  CHECK(got.substr(got.size() - 4) == "...\n");
  CHECK(count_lines(got, "z") == static_cast<int>(Diagnostics::kMaxLine) - 5);
}

TEST_CASE("a directory path is walked from / without following a symlink the agent could have made") {
  TempDir t;
  fs::create_directories(t.dir / "ws/real");
  fs::create_directories(t.dir / "elsewhere");
  fs::create_directory_symlink(t.dir / "elsewhere", t.dir / "ws/out");
  // Root's own link in root's own 0700 dir would pass the rule: as root, make it the agent's.
  if (::geteuid() == 0) REQUIRE(::lchown(t.s("ws/out").c_str(), 1000, 1000) == 0);
  std::string why;
  UniqueFd fd = open_dir_path(t.s("ws/out/deeper"), true, why);
  CHECK_FALSE(fd);
  CHECK(why == "'" + t.s("ws/out") + "' is a symlink (refused)");
  CHECK(fs::is_empty(t.dir / "elsewhere"));
  fd = open_dir_path(t.s("ws/real/a/b"), true, why);
  REQUIRE(fd);
  struct stat st{};
  REQUIRE(::stat(t.s("ws/real/a").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(st.st_uid == ::geteuid());
  CHECK_FALSE(open_dir_path(t.s("ws/none"), false, why));
  CHECK(why == "cannot open '" + t.s("ws/none") + "': No such file or directory");
  t.write("ws/file", "x");
  CHECK_FALSE(open_dir_path(t.s("ws/file/x"), true, why));
  CHECK(why == "cannot open '" + t.s("ws/file") + "': Not a directory");
  CHECK(open_dir_path(t.s("ws/real/a/../../real/./a"), false, why));
}

TEST_CASE("a symlink is followed only when root made it in a directory only root may change") {
  if (::geteuid() != 0) return;  // the rule's positive side needs root's own links
  TempDir t;
  fs::create_directories(t.dir / "sys/target");
  fs::create_directory_symlink("target", t.dir / "sys/link");  // like /var/run -> ../run
  ::chmod(t.s("sys").c_str(), 0755);
  std::string why;
  CHECK(open_dir_path(t.s("sys/link"), false, why));
  ::chmod(t.s("sys").c_str(), 0775);  // a group may write here: anyone of it could have made the link
  CHECK_FALSE(open_dir_path(t.s("sys/link"), false, why));
  CHECK(why == "'" + t.s("sys/link") + "' is a symlink (refused)");
  ::chmod(t.s("sys").c_str(), 0755);
  REQUIRE(::lchown(t.s("sys/link").c_str(), 1000, 1000) == 0);
  CHECK_FALSE(open_dir_path(t.s("sys/link"), false, why));
  std::string name;
  CHECK(open_parent_dir("/var/run/x", false, name, why));  // the system's own (/var/run -> /run, where present)
  CHECK(name == "x");
}

TEST_CASE("a status file or ledger under a planted parent symlink is refused, and nothing lands at the target") {
  TempDir t;
  fs::create_directories(t.dir / "ws");
  fs::create_directories(t.dir / "victim");
  fs::create_directory_symlink(t.dir / "victim", t.dir / "ws/out");
  if (::geteuid() == 0) REQUIRE(::lchown(t.s("ws/out").c_str(), 1000, 1000) == 0);
  ReplacingFile status(t.s("ws/out/status.json"), 0644);
  CHECK(status.fd() < 0);
  CHECK(status.why() == "'" + t.s("ws/out") + "' is a symlink (refused)");
  std::string why;
  CHECK(open_append_owned(t.s("ws/out/logs/ledger.jsonl"), true, why) == -1);
  CHECK(why == "'" + t.s("ws/out") + "' is a symlink (refused)");
  CHECK(fs::is_empty(t.dir / "victim"));
  ReplacingFile ok(t.s("ws/status.json"), 0644);
  REQUIRE(ok.fd() >= 0);
  CHECK(::write(ok.fd(), "{}", 2) == 2);
  CHECK(ok.put_in_place());
  CHECK(t.read("ws/status.json") == "{}");
  CHECK(fs::directory_iterator(t.dir / "ws") != fs::directory_iterator());
}

TEST_CASE("the forwarder refuses what RFC 9112 says a proxy must not pass on") {
  const std::string get = "GET http://a.test:8080/x HTTP/1.1\r\n";
  CHECK(refusal_of(get + "Host: a.test:8080\r\n\r\n") == "forwarded");
  CHECK(refusal_of(get + "Host: a.test:8080\r\nHost: evil.example\r\n\r\n") == "host_repeated");
  CHECK(refusal_of(get + "Host: a.test:8080\r\nhost: a.test:8080\r\n\r\n") == "host_repeated");
  CHECK(refusal_of(get + "\r\n") == "host_missing");
  CHECK(refusal_of("GET http://a.test/ HTTP/1.0\r\n\r\n") == "forwarded");
  CHECK(refusal_of(get + "Host: evil.example\r\n\r\n") == "host_mismatch");
  CHECK(refusal_of(get + "Host:\r\n\r\n") == "host_mismatch");
  CHECK(refusal_of(get + "Host: a.test\r\n\r\n") == "host_mismatch");  // the port is part of it
  const std::string post = "POST http://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n";
  CHECK(refusal_of(post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n") == "bad_framing");
  CHECK(refusal_of(post + "Content-Length: 5\r\nContent-Length: 5\r\n\r\n") == "bad_framing");
  CHECK(refusal_of(post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n") == "bad_framing");
  CHECK(refusal_of(post + "Content-Length: 5, 5\r\n\r\n") == "bad_framing");
  CHECK(refusal_of(post + "Content-Length: -1\r\n\r\n") == "bad_framing");
  CHECK(refusal_of(post + "Content-Length: 1234567890123456\r\n\r\n") == "bad_framing");
  CHECK(refusal_of(post + "Transfer-Encoding: chunked, chunked\r\n\r\n") == "bad_framing");
  CHECK(refusal_of(post + "Transfer-Encoding: gzip, chunked\r\n\r\n") == "unsupported_coding");
  CHECK(forward_plan(post + "Transfer-Encoding: gzip\r\n\r\n").status == 501);
  CHECK(refusal_of("POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == "bad_framing");
  CHECK(forward_plan(post + "Content-Length: 5, 5\r\n\r\n").why == "Content-Length is not a decimal length");
  CHECK(forward_plan(get + "\r\n").status == 400);
  for (const char* bad : {"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n X: folded\r\n\r\n",
                          "GET http://a.test/ HTTP/1.1\nHost: a.test\n\n", "GET http://a.test/ HTTP/1.1\r\nHost: a.test\n\r\n",
                          "GET http://a.test/ HTTP/1.1\r\nHost: a\rb.test\r\n\r\n", "GET http://a.test/ HTTP/1.1\r\nHost : a.test\r\n\r\n",
                          "GET http://a.test/ HTTP/1.1\r\nHo(st: a.test\r\n\r\n", "GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n"}) {
    CAPTURE(bad);
    CHECK(parse_request_head(bad).status == RequestHead::Status::bad);
  }
  CHECK(parse_request_head("GET http://a.test/ HTTP/1.1\nHost: a.test\n\n").why == "bare LF in the request head");
  CHECK(parse_request_head("GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n").why == "bare CR in the request head");
  CHECK(parse_request_head("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n X\r\n\r\n").why == "folded header line");
}

TEST_CASE("the forwarded head is regenerated: one Host from the URI, the framing decided, connection: close") {
  ForwardPlan p = forward_plan("POST http://A.test:8080/v1/x?q HTTP/1.1\r\nHost: a.test:8080\r\nConnection: keep-alive, "
                               "X-Secret, Content-Length\r\nX-Secret: s\r\nX-Kept: k\r\nTE: trailers\r\nProxy-Authorization: "
                               "x\r\nContent-Length: 007\r\n\r\n");
  REQUIRE_FALSE(p.refusal);
  CHECK(p.head ==
        "POST /v1/x?q HTTP/1.1\r\nhost: a.test:8080\r\nx-kept: k\r\ncontent-length: 7\r\nconnection: close\r\n\r\n");
  CHECK(forward_plan("GET http://a.test/ HTTP/1.0\r\n\r\n").head == "GET / HTTP/1.0\r\nhost: a.test\r\nconnection: close\r\n\r\n");
  p = forward_plan("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: Chunked\r\n\r\n");
  CHECK(p.head == "POST / HTTP/1.1\r\nhost: a.test\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n");
  CHECK(p.framing.kind == BodyFraming::Kind::chunked);
}

TEST_CASE("the body framer stops at the body's end and re-frames chunks canonically") {
  Framed f = frame(BodyFraming{BodyFraming::Kind::length, 5}, "hello" "GET http://evil.example/ HTTP/1.1\r\n\r\n");
  CHECK((f.out == "hello" && f.used == 5 && f.status == BodyFramer::Status::done));
  CHECK(frame(BodyFraming{}, "GET /").used == 0);
  const std::string smuggled = "GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n";
  f = frame(kChunked, "5;name=\"v;x\" ; b\r\nhello\r\n00A\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n" + smuggled);
  CHECK(f.status == BodyFramer::Status::done);
  CHECK(f.out == "5\r\nhello\r\na\r\n0123456789\r\n0\r\n\r\n");
  CHECK(f.used == 61);  // all but the smuggled request: the extension, the size's zeros, the trailer dropped
  BodyFramer split(kChunked);
  std::string out;
  for (char c : std::string("3\r\nabc\r\n0\r\n\r\n")) split.feed(std::string_view(&c, 1), out);
  CHECK((split.status() == BodyFramer::Status::done && out == "3\r\nabc\r\n0\r\n\r\n"));
  auto why = [](const std::string& body) {
    BodyFramer b(kChunked);
    std::string o;
    b.feed(body, o);
    return b.status() == BodyFramer::Status::bad ? b.why() : "accepted";
  };
  CHECK(why("5\nhello\r\n0\r\n\r\n") == "bare LF in the chunked body");
  CHECK(why("5\r\nhelloXY0\r\n\r\n") == "chunk data not followed by CRLF");
  CHECK(why("x\r\n") == "chunk size is not hexadecimal");
  CHECK(why("-5\r\n") == "chunk size is not hexadecimal");
  CHECK(why("1000000000000000\r\n") == "chunk size too large");
  CHECK(why("5 x\r\n") == "malformed chunk extension");
  CHECK(why("5\r\r\n") == "bare CR in the chunked body");
  CHECK(why("0\r\n folded\r\n\r\n") == "folded trailer line");
  CHECK(why("0\r\nno colon\r\n\r\n") == "malformed trailer field");
  CHECK(why(std::string(5000, '0')) == "a chunked-body line longer than 4 KiB");
  CHECK(why("5\r\nhel") == "accepted");  // not finished: more to come
}
