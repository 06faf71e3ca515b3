#include "launcher/podman/namesake.h"

#include <chrono>
#include <thread>

#include "base/error.h"
#include "launcher/podman/deferred_removal.h"
#include "launcher/podman/liveness.h"

namespace asbx {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

bool name_in_use(const std::string& create_error) { return create_error.find("is already in use") != std::string::npos; }

NamesakeWait wait_for_namesake(PodmanApi& api, const std::string& name, const std::string& runtime_dir, std::int64_t wait_ms) {
  nlohmann::json held = api.inspect(name);
  if (held.is_null()) return {true, ""};  // removed since the create was refused
  std::string id = held.is_object() ? held.value("Id", "") : "";
  RemovalMarker marker = read_removal_marker(runtime_dir, id);
  if (id.empty() || !marker.present || !launcher_alive(marker.pid, marker.started_unix)) return {};  // not a session being removed
  for (std::int64_t deadline = now_ms() + wait_ms; now_ms() < deadline;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    RemovalMarker now = read_removal_marker(runtime_dir, id);
    if (!now.present) return {true, ""};  // removed: the remover drops its marker after podman's answer
    if (launcher_alive(now.pid, now.started_unix)) continue;
    if (api.inspect(name).is_null()) return {true, ""};  // it ended between its removal and the marker's unlink
    return {false, "the remover of the session that held it (pid " + std::to_string(now.pid) +
                       ") ended without removing it; agent-sandbox gc will"};
  }
  return {false, "the session that held it has ended and its remover (pid " + std::to_string(marker.pid) +
                     ") was still at work after " + std::to_string(wait_ms / 1000) + " s"};
}

Created create_after_namesake(PodmanApi& api, const nlohmann::json& body, const std::string& runtime_dir) {
  try {
    return api.create(body);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::create_failed || !name_in_use(e.what())) throw;
    NamesakeWait w = wait_for_namesake(api, body.value("name", ""), runtime_dir);
    if (!w.again && w.why.empty()) throw;
    if (!w.again) throw Error(ErrorKind::create_failed, std::string(e.what()) + "; " + w.why);
  }
  return api.create(body);
}

}  // namespace asbx
