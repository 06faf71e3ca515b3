#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "launcher/podman/frames.h"

using namespace asbx;

namespace {
std::string frame(int stream, const std::string& payload) {
  std::string f(8, '\0');
  f[0] = static_cast<char>(stream);
  auto n = static_cast<unsigned>(payload.size());
  f[4] = static_cast<char>(n >> 24), f[5] = static_cast<char>(n >> 16), f[6] = static_cast<char>(n >> 8),
  f[7] = static_cast<char>(n);
  return f + payload;
}

struct Collected {
  std::string out, err, error;
  FrameDemuxer demux{[this](int s, const char* d, std::size_t n) {
    (s == 1 ? out : s == 2 ? err : error).append(d, n);
  }};
};
}  // namespace

TEST_CASE("whole frames go to their streams") {
  Collected c;
  std::string in = frame(1, "hello\n") + frame(2, "oops\n") + frame(1, "bye\n");
  c.demux.feed(in.data(), in.size());
  CHECK(c.out == "hello\nbye\n");
  CHECK(c.err == "oops\n");
  CHECK_FALSE(c.demux.mid_frame());
}

TEST_CASE("frames split at every byte boundary") {
  std::string in = frame(1, "abc") + frame(2, "de") + frame(1, std::string(70000, 'x'));
  for (std::size_t cut = 0; cut <= in.size(); cut += (cut < 40 ? 1 : 997)) {
    Collected c;
    c.demux.feed(in.data(), cut);
    c.demux.feed(in.data() + cut, in.size() - cut);
    CHECK(c.out == "abc" + std::string(70000, 'x'));
    CHECK(c.err == "de");
  }
}

TEST_CASE("byte-at-a-time feeding") {
  Collected c;
  std::string in = frame(2, "e") + frame(1, "o");
  for (char ch : in) c.demux.feed(&ch, 1);
  CHECK(c.out == "o");
  CHECK(c.err == "e");
}

TEST_CASE("zero-length frames carry nothing") {
  Collected c;
  std::string in = frame(1, "") + frame(2, "") + frame(1, "x");
  c.demux.feed(in.data(), in.size());
  CHECK(c.out == "x");
  CHECK(c.err.empty());
}

TEST_CASE("frame type 3 is the server's error stream") {
  Collected c;
  std::string in = frame(3, "attach failed");
  c.demux.feed(in.data(), in.size());
  CHECK(c.error == "attach failed");
}

TEST_CASE("a truncated stream is noticed") {
  Collected c;
  std::string in = frame(1, "abcdef").substr(0, 10);
  c.demux.feed(in.data(), in.size());
  CHECK(c.demux.mid_frame());
}
