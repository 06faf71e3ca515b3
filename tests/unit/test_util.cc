#include <doctest/doctest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/config.h"
#include "base/util.h"

using namespace asbx;
namespace fs = std::filesystem;

TEST_CASE("the id character rule") {
  CHECK(is_plain_name("a", 1));
  CHECK(is_plain_name("s1700000000-0a1b.c_d", 64));
  CHECK_FALSE(is_plain_name("ab", 1));
  CHECK_FALSE(is_plain_name("", 64));
  for (const char* bad : {"-a", ".a", "_a", "a/b", "a b", "a:b", "caf\xc3\xa9"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_plain_name(bad, 64));
  }
}

TEST_CASE("make_dirs makes every missing component 0700 and names the one it cannot make") {
  char tmpl[] = "/tmp/asbx-unit-util-XXXXXX";
  fs::path root = ::mkdtemp(tmpl);
  CHECK(make_dirs((root / "a/b/c").string()));
  CHECK(fs::is_directory(root / "a/b/c"));
  struct stat st{};
  REQUIRE(::stat((root / "a/b").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(make_dirs((root / "a/b/c/").string()));  // existing, trailing slash
  CHECK(make_dirs(""));
  std::ofstream((root / "file").string()) << "x";
  std::string why;
  CHECK_FALSE(make_dirs((root / "file/x/y").string(), &why));
  CHECK(why == "cannot open '" + (root / "file").string() + "': Not a directory");
  fs::remove_all(root);
}

TEST_CASE("the XDG config base") {
  UserFacts u;
  u.home = "/h";
  CHECK(config_base(u) == "/h/.config");
  u.xdg_config_home = "/x";
  CHECK(config_base(u) == "/x");
}

TEST_CASE("environ entries become a map") {
  char a[] = "A=1", b[] = "B==x=", junk[] = "JUNK", again[] = "A=2", empty[] = "E=";
  char* entries[] = {a, b, junk, again, empty, nullptr};
  CHECK(environ_map(entries) == std::map<std::string, std::string>{{"A", "2"}, {"B", "=x="}, {"E", ""}});
  CHECK(environ_map(nullptr).empty());
}

TEST_CASE("join") {
  CHECK(join({}) == "");
  CHECK(join({"a"}) == "a");
  CHECK(join({"a", "", "c"}) == "a, , c");
  CHECK(join({"a", "b"}, "; ") == "a; b");
}
