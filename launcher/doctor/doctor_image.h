// `doctor`'s check of the seat's image against the image contract (docs/IMAGE.md): the platform,
// no ENTRYPOINT, the sandbox directories, the commands the agents need. The image's root is read
// the way a session reads it before `start`: a container is created and initialised (nothing of
// the image runs), its root is looked at through /proc/PID/root, and it is removed.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/seat_config.h"
#include "launcher/doctor/doctor.h"

namespace asbx {

// What the contract asks of an image's root (PATH is the launcher's, the user the agent's).
extern const std::vector<std::string> kImageDirs;        // must be directories
extern const std::vector<std::string> kImageCommands;    // must resolve and be executable
extern const std::vector<std::string> kImageToolchains;  // reported when missing, not required

struct ImageFacts {
  std::string image;
  std::string os, arch;
  std::vector<std::string> entrypoint;
  bool probed = false;       // the root was read (else probe_error says why)
  std::string probe_error;
  std::vector<std::string> missing_dirs, missing_commands, missing_tools;
};

// Pure: the inspect answer's platform and entrypoint into `facts`.
void read_image_config(const nlohmann::json& inspect, ImageFacts& facts);
// Pure: the verdict — checks "image_contract" (fails on any breach) and "image_tools" (informative).
std::vector<DoctorCheck> image_contract_checks(const ImageFacts& facts, const std::string& seat_arch);

// Mechanism: inspect, create + init + read the root + remove; appends the two checks.
void check_image_contract(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out);

}  // namespace asbx
