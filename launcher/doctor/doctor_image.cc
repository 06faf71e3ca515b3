#include "launcher/doctor/doctor_image.h"

#include <optional>
#include <fstream>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/podman/container_root.h"
#include "launcher/podman/create_lock.h"
#include "launcher/podman/podman_api.h"

namespace asbx {

const std::vector<std::string> kImageDirs = {"/sandbox/home", "/sandbox/workspaces", "/tmp"};
const std::vector<std::string> kImageCommands = {"bash", "git", "codex", "claude"};
const std::vector<std::string> kImageToolchains = {"node", "npm", "pnpm", "bun", "python3", "pip3", "pytest",
                                                   "cargo", "rustc", "cc", "make", "gh", "rg", "jq"};

namespace {

constexpr const char* kLauncherPath = "/usr/local/bin:/usr/bin:/bin";  // credtable/env_policy.cc sets it
constexpr long kCreateLockWaitMs = 60 * 1000;

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string seat_arch() {
  struct utsname u{};
  if (::uname(&u) != 0) return "";
  std::string m = u.machine;
  if (m == "x86_64") return "amd64";
  if (m == "aarch64") return "arm64";
  return m;
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// The smallest body that gives the image's root as a session would see it: the agent's user,
// read-only, no network, no capabilities. It is never started. Labels as a session's, so an
// interrupted doctor's container is an orphan `gc` removes.
nlohmann::json probe_body(const SeatConfig& seat, const UserFacts& user, const std::string& id) {
  std::string agent = user.uid == 0 ? "1000:1000" : std::to_string(user.uid) + ":" + std::to_string(user.gid);
  nlohmann::json body = {
      {"name", "asbx-" + id},
      {"image", seat.image},
      {"command", {"true"}},
      {"user", agent},
      {"cap_drop", {"ALL"}},
      {"no_new_privileges", true},
      {"read_only_filesystem", true},
      {"netns", {{"nsmode", "none"}}},
      {"labels",
       {{"agent-sandbox.session", id},
        {"agent-sandbox.owner", user.name.empty() ? std::to_string(user.uid) : user.name},
        {"agent-sandbox.started", std::to_string(::time(nullptr))},
        {"agent-sandbox.launcher-pid", std::to_string(::getpid())},
        {"agent-sandbox.boot-id", boot_id()},
        {"agent-sandbox.timeout-ms", "60000"}}},
  };
  if (user.uid != 0) body["userns"] = {{"nsmode", "keep-id"}};
  return body;
}

void read_root(long pid, const UserFacts& user, ImageFacts& facts) {
  ContainerRoot root(pid);
  unsigned uid = user.uid == 0 ? 1000 : user.uid, gid = user.uid == 0 ? 1000 : user.gid;
  for (const auto& d : kImageDirs) {
    auto st = root.stat_no_symlinks(d);
    if (!st || !S_ISDIR(st->st_mode)) facts.missing_dirs.push_back(d);
  }
  auto found = [&](const std::string& c) {
    return root.resolve_command(c, kLauncherPath, "/", uid, gid) == CommandVerdict::found;
  };
  for (const auto& c : kImageCommands)
    if (!found(c)) facts.missing_commands.push_back(c);
  for (const auto& c : kImageToolchains)
    if (!found(c)) facts.missing_tools.push_back(c);
  facts.probed = true;
}

void probe_root(const SeatConfig& seat, const UserFacts& user, ImageFacts& facts) {
  PodmanApi api(seat.socket);
  std::string id = "doctor-" + std::to_string(::getpid());
  Created c;
  {
    std::optional<CreateLock> turn;
    if (user.uid != 0) turn.emplace(seat.runtime_dir, kCreateLockWaitMs);
    c = api.create(probe_body(seat, user, id));
  }
  try {
    api.init(c.id);
    nlohmann::json state = api.inspect(c.id);
    long pid = state.is_object() && state.contains("State") ? state["State"].value("Pid", 0L) : 0L;
    if (pid <= 0) throw Error(ErrorKind::start_failed, "podman reported no process for the initialised probe container");
    read_root(pid, user, facts);
  } catch (...) {
    api.remove(c.id);
    throw;
  }
  api.remove(c.id);
}

}  // namespace

void read_image_config(const nlohmann::json& inspect, ImageFacts& facts) {
  if (!inspect.is_object()) return;
  facts.os = inspect.value("Os", "");
  facts.arch = inspect.value("Architecture", "");
  if (inspect.contains("Config") && inspect["Config"].is_object() && inspect["Config"].contains("Entrypoint") &&
      inspect["Config"]["Entrypoint"].is_array())
    for (const auto& e : inspect["Config"]["Entrypoint"])
      if (e.is_string()) facts.entrypoint.push_back(e);
}

std::vector<DoctorCheck> image_contract_checks(const ImageFacts& f, const std::string& arch) {
  std::vector<std::string> breaches;
  if (f.os != "linux") breaches.push_back("os is '" + f.os + "', not linux");
  if (f.arch != arch) breaches.push_back("architecture is '" + f.arch + "', the seat's is " + arch);
  if (!f.entrypoint.empty())
    breaches.push_back("ENTRYPOINT [" + join_words(f.entrypoint) + "] would run before every command");
  if (!f.probed) breaches.push_back("its root could not be read: " + f.probe_error);
  if (!f.missing_dirs.empty()) breaches.push_back("no directory " + join_words(f.missing_dirs));
  if (!f.missing_commands.empty())
    breaches.push_back("not found or not executable by the agent on " + std::string(kLauncherPath) + ": " +
                       join_words(f.missing_commands));
  DoctorCheck contract{"image_contract", breaches.empty(), "", ""};
  if (breaches.empty()) {
    contract.detail = f.image + " meets the image contract (" + join_words(kImageCommands) + ", /sandbox/home, "
                      "/sandbox/workspaces, no ENTRYPOINT)";
  } else {
    for (const auto& b : breaches) contract.detail += (contract.detail.empty() ? f.image + ": " : "; ") + b;
    contract.remedy = "rebuild the image to meet docs/IMAGE.md \"The image contract\" (scripts/build-image.sh "
                      "builds one that does)";
  }
  std::string tools = !f.probed              ? "not checked"
                      : f.missing_tools.empty() ? "all present: " + join_words(kImageToolchains)
                                                : "missing (sessions cannot use them): " + join_words(f.missing_tools);
  return {contract, {"image_tools", true, tools, ""}};
}

void check_image_contract(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out) {
  ImageFacts facts;
  facts.image = seat.image;
  try {
    read_image_config(PodmanApi(seat.socket).image_inspect(seat.image), facts);
  } catch (const Error& e) {
    out.push_back({"image_contract", false, seat.image + ": not checked (" + e.what() + ")", "fix image first"});
    return;
  }
  try {
    probe_root(seat, user, facts);
  } catch (const Error& e) {
    facts.probe_error = e.what();
  }
  for (auto& c : image_contract_checks(facts, seat_arch())) out.push_back(std::move(c));
}

}  // namespace asbx
