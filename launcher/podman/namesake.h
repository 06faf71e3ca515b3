// A session that reuses the id of one that has just ended can meet that session's container still
// holding the name `asbx-<id>`: its record is written and its remover (deferred_removal.h) is at
// work. The create then waits for that remover, bounded, and is made once more. Any other holder
// of the name (a session still running, a container nobody is removing) is the create's error at once.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "launcher/podman/podman_api.h"

namespace asbx {

inline constexpr std::int64_t kNamesakeWaitMs = 10'000;  // the remover's four tries take 3.5 s and their calls

// podman's refusal of a create whose name is taken ("… is already in use"): pure, unit-tested.
bool name_in_use(const std::string& create_error);

struct NamesakeWait {
  bool again = false;  // the name may be tried once more
  std::string why;     // it waited and the name is still held: why ("" when it did not wait)
};
// When the container holding `name` is being removed by a live remover: waits (at most `wait_ms`)
// until its marker in `runtime_dir` is gone (removed) or its remover ended. A holder gone already
// may be tried again; any other holder is not waited for.
NamesakeWait wait_for_namesake(PodmanApi& api, const std::string& name, const std::string& runtime_dir,
                               std::int64_t wait_ms = kNamesakeWaitMs);

// api.create(body); on its name in use, the wait above and one more create. Throws create_failed with
// podman's message, and when a remover outlasted the wait, that.
Created create_after_namesake(PodmanApi& api, const nlohmann::json& body, const std::string& runtime_dir);

}  // namespace asbx
