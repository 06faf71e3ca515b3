// What a unit test builds a plan from, fixed: the seat's user, a session's facts (the same on every
// machine, at every time), and the message of the Error a call must throw.
#pragma once
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <string>

#include "base/error.h"
#include "base/request.h"
#include "base/seat_config.h"

namespace asbx::test {

inline UserFacts root_user() {
  UserFacts u;
  u.uid = 0;
  u.gid = 0;
  u.name = "root";
  u.home = "/root";
  return u;
}

inline SessionFacts fixed_facts(std::map<std::string, std::string> environ = {}) {
  SessionFacts f;
  f.now_unix = 1700000000;
  f.pid = 4242;
  f.boot_id = "boot-1";
  f.environ = std::move(environ);
  return f;
}

// The message of the Error `f` throws, checked to be of `kind`; a failure when nothing is thrown.
inline std::string error_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("nothing was thrown");
  return "";
}

}  // namespace asbx::test
