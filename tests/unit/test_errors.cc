#include <doctest/doctest.h>

#include <set>

#include "base/error.h"

using namespace asbx;

TEST_CASE("exit codes are unique, in the launcher block, and names round-trip") {
  std::set<int> codes;
  std::set<std::string> names;
  for (const auto& row : exit_code_table()) {
    CHECK(codes.insert(row.code).second);
    CHECK(names.insert(row.name).second);
    CHECK(row.code >= 200);
    CHECK(row.code <= 239);
    CHECK(kind_from_name(row.name) == row.kind);
    CHECK(exit_code_of(row.kind) == row.code);
    CHECK(std::string(row.meaning).size() > 10);
  }
}

TEST_CASE("an unknown kind name is a usage error") {
  CHECK_THROWS_WITH_AS(kind_from_name("nope"), "unknown error kind 'nope'", Error);
}

TEST_CASE("context keeps the inner kind") {
  try {
    rethrow_with_context(Error(ErrorKind::image_missing, "inner"), "outer");
    FAIL("no throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::image_missing);
    CHECK(std::string(e.what()) == "outer: inner");
  }
}
