#include "launcher/pool/pool.h"

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/request.h"
#include "base/util.h"
#include <cstring>
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/podman/gc.h"
#include "launcher/podman/liveness.h"
#include "launcher/podman/pool_claim.h"

namespace asbx {
namespace {

std::string label(const nlohmann::json& labels, const char* key) {
  return labels.is_object() && labels.contains(key) && labels[key].is_string() ? labels[key].get<std::string>() : "";
}

std::int64_t number(const std::string& text) {
  try {
    std::size_t used = 0;
    std::int64_t v = std::stoll(text, &used);
    return used == text.size() ? v : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

std::string pool_dir(const std::string& runtime_dir) {
  std::string dir = runtime_dir + "/.pool", why;
  if (!make_dirs(runtime_dir, &why) || (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST))
    throw Error(ErrorKind::internal, "warm pool: cannot make " + dir + ": " + (why.empty() ? std::strerror(errno) : why));
  return dir;
}

std::int64_t plan_started_unix(const LaunchPlan& plan) {
  auto it = plan.labels.find("agent-sandbox.started");
  return it == plan.labels.end() ? 0 : std::max<std::int64_t>(0, number(it->second));
}

std::string image_id(PodmanApi& api, const std::string& image) {
  nlohmann::json info = api.image_inspect(image);
  std::string id = info.is_object() ? info.value("Id", "") : "";
  if (id.empty()) throw Error(ErrorKind::image_missing, "image '" + image + "': podman reported no id");
  return id;
}

std::vector<Member> list_members(PodmanApi& api, const std::string& runtime_dir) {
  std::vector<Member> out;
  nlohmann::json list = api.list_by_label(kPoolLabel);
  if (!list.is_array()) return out;
  std::string boot = current_host_facts().boot_id;
  int dir = ::open(pool_dir(runtime_dir).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (const auto& e : list) {
    if (!e.is_object()) continue;
    nlohmann::json labels = e.value("Labels", nlohmann::json::object());
    if (label(labels, kPoolRuntimeLabel) != runtime_dir) continue;  // another seat config's
    LiveSession s = session_from_list_entry(e);  // the launcher labels, read as gc reads them
    if (!s.odd.empty()) continue;
    Member m;
    m.id = s.container_id;
    m.state = s.state;
    m.session = s.session;
    m.digest = label(labels, kPoolLabel);
    m.keeper_pid = s.launcher_pid;
    m.started_unix = s.started_unix;
    m.listener_fd = static_cast<int>(number(label(labels, kPoolListenerLabel)));
    m.slot = number(label(labels, kPoolSlotLabel));
    m.claimed = dir >= 0 && read_claim(dir, m.id).has_value();
    m.ready = !m.claimed && m.state == "running" && s.boot_id == boot &&
              m.listener_fd >= 0 && launcher_alive(m.keeper_pid, m.started_unix);
    if (!m.id.empty()) out.push_back(m);
  }
  if (dir >= 0) ::close(dir);
  return out;
}

void drop_member_session(const std::string& runtime_dir, const std::string& session) {
  try {
    validate_session_id(session);
  } catch (const Error&) {
    return;  // a label is trusted as a dir name only when it is a valid session id
  }
  std::string dir = runtime_dir + "/" + session;
  std::error_code ignored;
  if (unmount_seat_tmpfs(dir)) std::filesystem::remove_all(dir, ignored);  // never across a mount left
}

std::string discard_member(PodmanApi& api, const std::string& runtime_dir, const Member& m, const std::string& why) {
  if (!m.claimed) {  // a fill's own claim first: a session that claimed it since the list keeps it
    int dir = ::open(pool_dir(runtime_dir).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool mine = dir >= 0 && claim_member(dir, m.id, PoolClaim{static_cast<long>(::getpid()), m.started_unix, 0, ""});
    if (dir >= 0) ::close(dir);
    if (!mine) return "left member " + m.id.substr(0, 12) + ": a session claimed it meanwhile";
    if (launcher_alive(m.keeper_pid, m.started_unix)) ::kill(static_cast<pid_t>(m.keeper_pid), SIGKILL);
  }
  bool removed = api.remove_retrying(m.id);
  if (removed) {
    drop_member_session(runtime_dir, m.session);
    ::unlink((pool_dir(runtime_dir) + "/" + m.id + ".claim").c_str());
  }
  return (removed ? "removed member " : "could not remove member ") + m.id.substr(0, 12) + ": " + why;
}

}  // namespace asbx
