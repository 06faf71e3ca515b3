// `agent-sandbox doctor` / `sandbox-run doctor`: a checklist of what a session on this seat
// needs, each failed line with its exact remedy. The checks only read, except that a
// stopped rootless podman.socket is started, as a session would, and that the image check
// creates and initialises (never starts) one container, removed at once (doctor_image.h).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace asbx {

struct DoctorCheck {
  std::string name;
  bool ok = false;
  std::string detail;  // what was measured
  std::string remedy;  // "" when ok
};

std::vector<DoctorCheck> run_doctor();
std::string doctor_text(const std::vector<DoctorCheck>& checks);
nlohmann::json doctor_json(const std::vector<DoctorCheck>& checks);
// 0 when every check passed, else the seat_preflight code.
int doctor_exit_code(const std::vector<DoctorCheck>& checks);

// Pure pieces (unit-tested): the subordinate range count for a user in /etc/subuid text,
// and the controllers missing from a cgroup.controllers line.
long subid_count(const std::string& text, const std::string& user, unsigned uid);
std::vector<std::string> missing_controllers(const std::string& controllers_line);

}  // namespace asbx
