#include "launcher/lifecycle/exit_code.h"

#include "base/error.h"
#include "launcher/podman/podman_api.h"

namespace asbx {
namespace {
const int kExitFileMs = 1000;  // after the attach stream ended (conmon writes it at once)
}

void ExitCode::arm(const nlohmann::json& state, const std::string& container_id) {
  long conmon = state.is_object() && state.contains("State") ? state["State"].value("ConmonPid", 0L) : 0L;
  file_.arm(conmon, container_id);  // not armed: podman's wait, as before
}

int ExitCode::wait(PodmanApi& api, const std::string& container_id) {
  if (int code = file_.read(kExitFileMs); code >= 0) {
    from_file_ = true;
    return code;
  }
  // podman 4.3's wait can answer 500 ("no such exit code") when it lost the race with its own
  // cleanup; the exit code is then read from inspect (from_state).
  try {
    return api.wait(container_id);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::podman_unreachable) throw;
    return -1;
  }
}

int ExitCode::from_state(PodmanApi& api, const std::string& container_id, int code) {
  if (code >= 0) return code;
  nlohmann::json state = api.inspect(container_id);
  if (state.is_object() && state.contains("State")) code = state["State"].value("ExitCode", code);
  return code;
}

}  // namespace asbx
