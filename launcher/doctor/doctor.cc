#include "base/fdio.h"
#include "launcher/doctor/doctor.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "plan/config.h"
#include "launcher/doctor/doctor_credentials.h"
#include "launcher/doctor/doctor_image.h"
#include "launcher/doctor/doctor_disk.h"
#include "launcher/doctor/doctor_kernel.h"
#include "launcher/doctor/doctor_runsc.h"
#include "launcher/doctor/doctor_userns.h"
#include "launcher/doctor/doctor_pool.h"
#include "base/error.h"
#include "launcher/lifecycle/local.h"
#include "launcher/podman/podman_api.h"
#include "launcher/podman/podman_socket.h"
#include "launcher/lifecycle/reexec.h"

namespace asbx {
namespace {

constexpr long kCgroup2Magic = 0x63677270;
constexpr long kMinSubids = 65536;

std::string read_text(const std::string& path) { return read_text_file(path).value_or(""); }

DoctorCheck check(const std::string& name, bool ok, const std::string& detail, const std::string& remedy) {
  return {name, ok, detail, ok ? "" : remedy};
}

DoctorCheck check_nnp(const PreflightFacts& f) {
  if (!f.no_new_privs) return check("no_new_privs", true, "NoNewPrivs: 0 (sessions run in this process)", "");
  if (f.uid == 0) return check("no_new_privs", true, "NoNewPrivs: 1, root (rootful podman needs no setuid helper)", "");
  return check("no_new_privs", true, "NoNewPrivs: 1 (sessions re-exec through systemd-run --user; needs the next three)", "");
}

void check_user_manager(const PreflightFacts& f, std::vector<DoctorCheck>& out) {
  std::string run = expected_runtime_dir(f.uid);
  out.push_back(check("linger", f.linger, f.linger ? "user " + f.user + " lingers" : "user " + f.user + " does not linger",
                      linger_remedy(f.user)));
  bool rd_ok = f.xdg_runtime_dir == run;
  out.push_back(check("runtime_dir", rd_ok, "XDG_RUNTIME_DIR=" + (f.xdg_runtime_dir.empty() ? "(unset)" : f.xdg_runtime_dir),
                      runtime_dir_remedy(f.uid)));
  out.push_back(check("user_bus", f.bus_socket, run + "/bus " + (f.bus_socket ? "is a socket" : "is missing"),
                      bus_remedy(f.user)));
}

void check_subids(const UserFacts& user, std::vector<DoctorCheck>& out) {
  for (const char* file : {"/etc/subuid", "/etc/subgid"}) {
    long n = subid_count(read_text(file), user.name, user.uid);
    std::string name = std::string(file).substr(5);
    out.push_back(check(name, n >= kMinSubids, std::to_string(n) + " ids for " + user.name + " in " + file,
                        "usermod --add-subuids 100000-165535 --add-subgids 100000-165535 " + user.name));
  }
}

std::string cgroup_version() {
  struct statfs st{};
  if (::statfs("/sys/fs/cgroup", &st) != 0) return "unknown";
  return static_cast<long>(st.f_type) == kCgroup2Magic ? "v2" : "v1";
}

// Rootful podman enforces limits on v1 and v2; rootless needs v2 with the controllers
// delegated to the user's manager.
DoctorCheck check_limits(const UserFacts& user, const SeatConfig& seat, const std::string& version) {
  std::string why;
  if (user.uid != 0 && version != "v2") why = "cgroup " + version + ": rootless podman ignores every limit";
  if (user.uid != 0 && version == "v2") {
    std::string uid = std::to_string(user.uid);
    std::string path = "/sys/fs/cgroup/user.slice/user-" + uid + ".slice/user@" + uid + ".service/cgroup.controllers";
    auto missing = missing_controllers(read_text(path));
    for (const auto& c : missing) why += (why.empty() ? "not delegated to user@" + uid + ".service: " : " ") + c;
  }
  if (why.empty()) return check("limits", true, "enforced (" + std::string(user.uid == 0 ? "rootful" : "rootless, delegated") + ")", "");
  if (seat.waive_unenforced_limits) return check("limits", true, "NOT enforced (" + why + "); waived in " + seat.path, "");
  return check("limits", false, "NOT enforced (" + why + ")",
               "boot the seat with cgroup v2 (systemd.unified_cgroup_hierarchy=1) and Delegate=memory pids cpu to "
               "user@.service, or set waive_unenforced_limits = true in " + default_seat_config_path(user));
}

void check_podman(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out) {
  try {
    std::string note = ensure_podman_socket(seat.socket, user);
    PodmanApi api(seat.socket);
    api.info();
    out.push_back(check("podman_socket", true, seat.socket + " answers" + (note.empty() ? "" : " (" + note + ")"), ""));
  } catch (const Error& e) {
    out.push_back(check("podman_socket", false, e.what(), "systemctl --user enable --now podman.socket"));
    out.push_back(check("image", false, seat.image + ": not checked (no podman API)", "fix podman_socket first"));
    return;
  }
  bool present = false;
  try { present = PodmanApi(seat.socket).image_exists(seat.image); } catch (const Error&) {}
  out.push_back(check("image", present, seat.image + (present ? " is present" : " is missing"),
                      "podman load -i agent-image.tar (scripts/seat-host/image-archive.sh makes it) or "
                      "scripts/build-image.sh"));
  if (present) check_image_contract(seat, user, out);
}

}  // namespace

long subid_count(const std::string& text, const std::string& user, unsigned uid) {
  std::istringstream in(text);
  std::string line;
  long total = 0;
  while (std::getline(in, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string who = line.substr(0, a);
    if (who != user && who != std::to_string(uid)) continue;
    try { total += std::stol(line.substr(b + 1)); } catch (const std::exception&) {}
  }
  return total;
}

std::vector<std::string> missing_controllers(const std::string& line) {
  std::vector<std::string> missing;
  std::istringstream in(line);
  std::vector<std::string> have{std::istream_iterator<std::string>(in), {}};
  for (const char* want : {"memory", "pids", "cpu"})
    if (std::find(have.begin(), have.end(), want) == have.end()) missing.push_back(want);
  return missing;
}

std::vector<DoctorCheck> run_doctor() {
  std::vector<DoctorCheck> out;
  UserFacts user = current_user_facts();
  SeatConfig seat;
  try {
    seat = current_seat_config();
    out.push_back(check("seat_config", true, seat.path.empty() ? "none (embedded defaults)" : seat.path, ""));
  } catch (const Error& e) {
    out.push_back(check("seat_config", false, e.what(), "fix the file at the line named"));
    return out;
  }
  PreflightFacts f = current_preflight_facts();
  out.push_back(check_nnp(f));
  if (user.uid != 0) check_user_manager(f, out);
  check_podman(seat, user, out);
  if (user.uid != 0) check_subids(user, out);
  std::string version = cgroup_version();
  out.push_back(check("cgroup", version != "unknown", "cgroup " + version, "mount /sys/fs/cgroup"));
  out.push_back(check_limits(user, seat, version));
  check_disk(seat, out);
  check_user_namespace(seat, user, out);
  check_pool(seat, user, out);
  check_credentials(seat, user, static_cast<std::int64_t>(std::time(nullptr)), out);
  check_runsc(seat, user, out);
  check_kernel_knobs(out);
  return out;
}

std::string doctor_text(const std::vector<DoctorCheck>& checks) {
  std::ostringstream out;
  int failed = 0;
  for (const auto& c : checks) {
    out << (c.ok ? "ok    " : "FAIL  ") << c.name << std::string(c.name.size() < 14 ? 14 - c.name.size() : 1, ' ')
        << c.detail << "\n";
    if (!c.ok) out << "      " << std::string(14, ' ') << "fix: " << c.remedy << "\n", ++failed;
  }
  out << checks.size() - failed << " passed, " << failed << " failed\n";
  return out.str();
}

nlohmann::json doctor_json(const std::vector<DoctorCheck>& checks) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : checks)
    list.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail},
                    {"remedy", c.ok ? nlohmann::json(nullptr) : nlohmann::json(c.remedy)}});
  return {{"ok", doctor_exit_code(checks) == 0}, {"checks", list}};
}

int doctor_exit_code(const std::vector<DoctorCheck>& checks) {
  for (const auto& c : checks)
    if (!c.ok) return exit_code_of(ErrorKind::seat_preflight);
  return 0;
}

}  // namespace asbx
