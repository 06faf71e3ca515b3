#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>

#include "launcher/remote/quote.h"
#include "launcher/remote/remote.h"

using namespace asbx;

namespace {

// What /bin/sh makes of a quoted word: printf's [%s] of each resulting argument.
std::string through_sh(const std::string& command_line) {
  std::string cmd = "printf '[%s]' " + command_line;
  FILE* p = ::popen(("/bin/sh -c " + shell_quote(cmd)).c_str(), "r");
  std::string out;
  char buf[256];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

}  // namespace

TEST_CASE("shell_quote leaves plain words alone and single-quotes the rest") {
  CHECK(shell_quote("codex") == "codex");
  CHECK(shell_quote("/a/b-c_d.e:f=g,h+i@j%k") == "/a/b-c_d.e:f=g,h+i@j%k");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$HOME") == "'$HOME'");
}

TEST_CASE("a corpus of hostile words survives /bin/sh unchanged") {
  const std::vector<std::string> corpus = {
      "plain", "", " ", "a b", "it's", "''", "\"", "$HOME", "${X:-y}", "`id`", "$(id)", "*", "?", "[a]",
      "~", "~root", ";", "&&", "|", ">", "<x", "#c", "\\", "\\'", "a\nb", "\t", "-n", "--", "!", "é ü 漢",
      "'\\''", "x=1", "{a,b}"};
  std::string expected;
  for (const auto& w : corpus) expected += "[" + w + "]";
  CHECK(through_sh(shell_join(corpus)) == expected);
}

TEST_CASE("seat_argv carries the request's options and the command verbatim") {
  Request r;
  r.id = "s1";
  r.memory = "2g";
  r.pids = 64;
  r.runtime = "codex";
  r.account = "work";
  r.tty = true;
  r.argv = {"codex", "exec", "fix it; rm -rf /"};
  CHECK(seat_argv(r, 4) == std::vector<std::string>{"sandbox-run", "--slots", "4", "--id", "s1", "--memory", "2g",
                                                    "--pids", "64", "--runtime", "codex", "--account", "work",
                                                    "--tty", "--", "codex", "exec", "fix it; rm -rf /"});
  CHECK(seat_command(r, 4) ==
        "sandbox-run --status-file \"$XDG_RUNTIME_DIR\"/agent-sandbox-status.s1.json --slots 4 --id s1 --memory 2g "
        "--pids 64 --runtime codex --account work --tty -- codex exec 'fix it; rm -rf /'");
}

TEST_CASE("seat_argv carries every --egress, in order") {
  Request r;
  r.id = "s2";
  r.egress = {"default", "http://api.mock.test:8080"};
  r.argv = {"true"};
  CHECK(seat_argv(r, 1) == std::vector<std::string>{"sandbox-run", "--slots", "1", "--id", "s2", "--egress", "default",
                                                    "--egress", "http://api.mock.test:8080", "--", "true"});
}

TEST_CASE("seat_argv: --capture-log becomes --capture-stdout; LOG's path never travels") {
  Request r;
  r.id = "s3";
  r.capture_log = "/home/me/logs/job 7.log";
  r.status_file = "/home/me/logs/job.json";
  r.argv = {"codex", "exec", "hi"};
  CHECK(seat_argv(r, 2) == std::vector<std::string>{"sandbox-run", "--slots", "2", "--id", "s3", "--capture-stdout",
                                                    "--", "codex", "exec", "hi"});
  CHECK(seat_command(r, 2).find("/home/me") == std::string::npos);
}
