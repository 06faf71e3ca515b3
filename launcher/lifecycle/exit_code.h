// The agent's exit code once the attach stream has ended: conmon's exit file first (no wait for
// podman's cleanup: launcher/podman/exit_file.h), else podman's wait, else the container's state.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "launcher/podman/exit_file.h"

namespace asbx {

class PodmanApi;

class ExitCode {
 public:
  // Between init and start: `state` is the initialised container's inspect.
  void arm(const nlohmann::json& state, const std::string& container_id);
  // Throws podman_unreachable when the service died (the attach stream ended because of it).
  int wait(PodmanApi& api, const std::string& container_id);
  // wait()'s -1 (podman's wait lost the race with its cleanup): the code in the container's state.
  static int from_state(PodmanApi& api, const std::string& container_id, int code);
  bool from_file() const { return from_file_; }

 private:
  ExitFile file_;
  bool from_file_ = false;
};

}  // namespace asbx
