// What the fuzz targets (fuzz/) found, each kept as a test, and a check that the quoting
// target's shell model reads command lines the way /bin/sh does.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "fuzz/posix_words.h"
#include "launcher/podman/cgroup_counters.h"
#include "base/error.h"
#include "base/fdio.h"
#include "egress/http_forward.h"
#include "gitscan/config.h"
#include "plan/network.h"
#include "launcher/remote/quote.h"
#include "launcher/lifecycle/status.h"

using namespace asbx;

namespace {

// /bin/sh's reading of a command line: each argument as [arg].
std::string sh_reads(const std::string& line) {
  FILE* p = ::popen(("/bin/sh -c " + shell_quote("printf '[%s]' " + line)).c_str(), "r");
  std::string out;
  char buf[256];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

void check_usage(const std::string& spec, const std::string& message) {
  try {
    parse_network(spec, "--network");
    FAIL("accepted: " << spec);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()) == message);
  }
}

}  // namespace

// fuzz/network.cc: "ns:/runet/nnns/\x99..tx" passed, and the create body's JSON then threw
// nlohmann's type_error (invalid UTF-8), an internal error at create time instead of a usage error.
TEST_CASE("a network mode with bytes outside printable ASCII is a usage error that does not quote them") {
  const std::string message =
      "--network: the network mode must be printable ASCII; use none, ns:/run/netns/NAME, container:NAME or slirp4netns";
  check_usage("ns:/runet/nnns/\x99..tx", message);
  check_usage("ns:/run/netns/a b", message);
  check_usage("ns:/run/netns/a\nb", message);
  check_usage("container:x\x7f", message);
  check_usage("\xff", message);
}

TEST_CASE("the fuzz target's shell model agrees with /bin/sh on quoted words") {
  const std::vector<std::string> words = {"plain", "", " ", "it's", "$HOME", "`id`", "~root", "a\nb", "x=1", "{a,b}",
                                          "*", "#c", "\\", "\"", "é", "--opt=~/x", "'\\''"};
  auto model = fuzz::posix_words("sandbox-run " + shell_join(words));
  REQUIRE(model.has_value());
  std::string expected = "[sandbox-run]", modelled;
  for (const auto& w : words) expected += "[" + w + "]";
  for (const auto& w : *model) modelled += "[" + w + "]";
  CHECK(modelled == expected);
  CHECK(sh_reads("sandbox-run " + shell_join(words)) == expected);
}

TEST_CASE("the shell model refuses what a shell would expand or split") {
  for (const char* line : {"a $HOME", "a `id`", "a *", "a ~root", "a #c", "a; b", "a | b", "a \"$x\"", "a 'open"})
    CHECK_FALSE(fuzz::posix_words(line).has_value());
  CHECK(*fuzz::posix_words("a 'b c' \"d\\\"e\" f\\ g") == std::vector<std::string>{"a", "b c", "d\"e", "f g"});
}

// Found next to the network finding: any caller-supplied bytes quoted in a message (a flag's
// value, argv0) made the status record's dump throw, so no record, no ledger line and an abort.
TEST_CASE("status records and ledger lines with non-UTF-8 bytes are still written, as valid JSON") {
  char dir_template[] = "/tmp/asbx-status-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template, status = dir + "/status.json", ledger = dir + "/ledger.jsonl";
  auto record = early_failure_record("s1", Error(ErrorKind::usage, "--memory: '\x99' is not a size"));
  CHECK(write_status_file(status, record));
  CHECK(append_ledger(ledger, record));
  for (const auto& path : {status, ledger}) {
    auto parsed = nlohmann::json::parse(*read_text_file(path));
    CHECK(parsed["message"] == "--memory: '?' is not a size");  // printable(), base/util.h
    CHECK(parsed["error_kind"] == "usage");
  }
  std::filesystem::remove_all(dir);
}

// fuzz/cgroup_counters.cc with the seed corpus/cgroup_counters/huge: usage_usec * 1000 overflowed
// int64 (undefined behaviour, UBSan: signed integer overflow). It saturates now.
TEST_CASE("an absurd cpu.stat usage_usec saturates instead of overflowing") {
  const CgroupLocation at{"v2", "/c", "/c", "/c"};
  auto sample = [&](const std::string& usec) {
    return sample_from(at, [&](const std::string& path) -> std::optional<std::string> {
      if (path == "/c/cpu.stat") return "usage_usec " + usec + "\n";
      return std::nullopt;
    });
  };
  CHECK(sample("9223372036854775807").cpu_usage_ns == std::numeric_limits<std::int64_t>::max());
  CHECK(sample("9223372036854776").cpu_usage_ns == std::numeric_limits<std::int64_t>::max());
  CHECK(sample("9223372036854775").cpu_usage_ns == 9223372036854775000);
  CHECK(sample("4000").cpu_usage_ns == 4000000);
}

TEST_CASE("fuzz/http_request: a head at the field limit is not forwarded past it once regenerated") {
  std::string raw = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n";
  for (int i = 0; i < 99; ++i) raw += "X-" + std::to_string(i) + ": v\r\n";  // 100 fields: the parser's limit
  raw += "\r\n";
  RequestHead h = parse_request_head(raw);
  REQUIRE(h.status == RequestHead::Status::ok);
  ForwardPlan p = plan_forward(h, destination_of(h));  // + connection: close would make 101
  CHECK(p.refusal == std::optional<std::string>("bad_request"));
  CHECK(p.why == "the request head is too large to forward");
  raw = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n";
  for (int i = 0; i < 98; ++i) raw += "X-" + std::to_string(i) + ": v\r\n";
  h = parse_request_head(raw + "\r\n");
  CHECK_FALSE(plan_forward(h, destination_of(h)).refusal);
}
TEST_CASE("fuzz finding: a git config error names a section of non-UTF-8 bytes printably (fuzz/git_config)") {
  // fuzz/corpus/git_config/nonascii-section: the message reaches the record, which is JSON.
  std::string text = "\xEF\xBB\xBF[remote \"owi\xff\xffgin\"]\r\n\turl \xc0x\r\n";
  CHECK(parse_git_config(text).error == "line 2: bad value for a key of [remote.owi??gin]");
}

