#pragma once
// Runs one step of a session and adds its duration to the record's phases (also when it throws).
#include <cstdint>

#include "base/result.h"
#include "launcher/lifecycle/pump.h"

namespace asbx {

template <class F>
auto timed_phase(SessionResult& result, const char* name, F&& step) -> decltype(step()) {
  struct Clock {
    SessionResult& result;
    const char* name;
    std::int64_t t0 = steady_ms();
    ~Clock() { result.phase_ms.emplace_back(name, steady_ms() - t0); }
  } clock{result, name};
  return step();
}

}  // namespace asbx
