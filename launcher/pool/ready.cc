#include "launcher/pool/ready.h"

#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/request.h"
#include "base/util.h"
#include "launcher/podman/gc.h"
#include "launcher/podman/liveness.h"
#include "launcher/podman/pool_claim.h"

namespace asbx {
namespace {

const char kReady[] = "ready";
const std::int64_t kReadyMax = 4096;

std::optional<Member> parse_ready(const std::string& text, const std::string& session) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    Member m;
    m.id = j.at("id").get<std::string>();
    m.digest = j.at("digest").get<std::string>();
    m.image = j.at("image").get<std::string>();
    m.boot_id = j.at("boot").get<std::string>();
    m.keeper_pid = j.at("keeper_pid").get<long>();
    m.started_unix = j.at("started").get<std::int64_t>();
    m.listener_fd = j.at("listener_fd").get<int>();
    m.slot = j.at("slot").get<std::int64_t>();
    m.init_pid = j.at("init_pid").get<long>();
    m.init_started = j.at("init_started").get<std::int64_t>();
    if (!j.at("resources").is_object()) return std::nullopt;
    m.resources = j.at("resources").dump();
    m.session = session;
    if (m.id.size() != 64 || m.id.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    return m;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::string write_ready(const std::string& member_dir, const Member& m) {
  nlohmann::json j = {{"id", m.id},         {"digest", m.digest},           {"image", m.image},
                      {"boot", m.boot_id},  {"keeper_pid", m.keeper_pid},   {"started", m.started_unix},
                      {"listener_fd", m.listener_fd}, {"slot", m.slot}, {"init_pid", m.init_pid},
                      {"init_started", m.init_started},
                      {"resources", nlohmann::json::parse(m.resources.empty() ? "{}" : m.resources)}};
  std::string tmp = member_dir + "/.ready", path = member_dir + "/" + kReady;
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return "cannot write " + tmp;
  std::string text = j.dump() + "\n";
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return "cannot write " + path;
  }
  return "";
}

std::vector<Member> ready_members(const std::string& runtime_dir) {
  std::vector<Member> out;
  DIR* d = ::opendir(runtime_dir.c_str());
  if (!d) return out;
  std::string boot = current_host_facts().boot_id;
  UniqueFd pool(::open((runtime_dir + "/.pool").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(kMemberIdPrefix, 0) != 0) continue;
    std::optional<std::string> text = read_file_beneath(::dirfd(d), name + "/" + kReady, kReadyMax);
    std::optional<Member> m = text ? parse_ready(*text, name) : std::nullopt;
    if (!m) continue;
    m->claimed = pool && read_claim(pool.get(), m->id).has_value();
    // Its container's init still runs (podman rm, a prune, a kill since: no member to hand out).
    m->ready = !m->claimed && m->boot_id == boot && m->listener_fd >= 0 && launcher_alive(m->keeper_pid, m->started_unix) &&
               launcher_alive(m->init_pid, m->init_started);
    out.push_back(*m);
  }
  ::closedir(d);
  return out;
}

}  // namespace asbx
