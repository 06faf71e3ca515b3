#include <doctest/doctest.h>

#include "base/error.h"
#include "launcher/remote/registry.h"

using namespace asbx;

namespace {

const char* kTwo = R"([[host]]
name = "a"
address = "10.0.0.1"
port = 2222
user = "seat"
roles = ["agent-seat"]
host_key = "ssh-ed25519 AAAA"
identity_file = "/k"
capacity = 4

[[host]]
name = "b"
address = "10.0.0.2"
user = "seat"
roles = ["build"]
known_hosts = "/kh"
)";

void check_config_error(const std::string& text, const std::string& message) {
  CHECK_THROWS_WITH_AS(parse_registry(text, "r.toml"), message.c_str(), Error);
  try {
    parse_registry(text, "r.toml");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
  }
}

}  // namespace

TEST_CASE("registry: the seat-host format, in file order") {
  Registry r = parse_registry(kTwo, "r.toml");
  REQUIRE(r.hosts.size() == 2);
  CHECK(r.hosts[0].name == "a");
  CHECK(r.hosts[0].port == 2222);
  CHECK(r.hosts[0].capacity == 4);
  CHECK(r.hosts[0].host_key == "ssh-ed25519 AAAA");
  CHECK(r.hosts[1].port == 22);
  CHECK(r.hosts[1].capacity == 1);
  CHECK(r.hosts[1].known_hosts == "/kh");
}

TEST_CASE("registry: mistakes name file:line") {
  check_config_error("[[host]]\nname = \"a\"\naddress = \"x\"\nuser = \"u\"\nhost_key = \"k\"\nport = \"22\"\n",
                     "r.toml:6: 'port' must be an integer");
  check_config_error("[[host]]\nname = \"a\"\nadress = \"x\"\n", "r.toml:3: unknown key 'adress'");
  check_config_error("hosts = 1\n", "r.toml:1: unknown key 'hosts'");
  check_config_error("[[host]]\nname = \"a\"\naddress = \"x\"\nuser = \"u\"\n",
                     "r.toml:1: host 'a' needs 'host_key' or 'known_hosts' (host keys are never accepted unseen)");
  check_config_error(std::string(kTwo) + "\n[[host]]\nname = \"a\"\naddress = \"y\"\nuser = \"u\"\nhost_key = \"k\"\n",
                     "r.toml:19: duplicate host name 'a'");
  check_config_error("[[host]]\nname = \"a\"\ncapacity = 0\n", "r.toml:3: 'capacity' must be 1-256");
}

TEST_CASE("seat candidates: --host alone, else agent-seat hosts in file order") {
  Registry r = parse_registry(kTwo, "r.toml");
  CHECK(seat_candidates(r, "").size() == 1);
  CHECK(seat_candidates(r, "b")[0].name == "b");
  CHECK_THROWS_WITH_AS(seat_candidates(r, "c"), "no host named 'c' in r.toml", Error);
}
