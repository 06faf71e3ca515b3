// `agent-sandbox doctor --registry FILE`: every seat of a registry checked over the same ssh a
// session uses — reachable, host key, the seat's sandbox-run version against this caller's, the
// seat's own `sandbox-run doctor` (image present, limits enforced or waived, the rest), capacity —
// one line per seat, then the remedy for each failed check. It only reads.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "launcher/doctor/doctor.h"
#include "launcher/remote/registry.h"

namespace asbx {

// What came back from one seat: the pure input of seat_checks.
struct SeatProbe {
  std::string connect_error;       // "" when the ssh connection was made
  bool host_key_rejected = false;  // connect_error came from the host key check
  int version_status = -1;         // `sandbox-run --version`
  std::string version_out;
  int doctor_status = -1;          // `sandbox-run doctor --json`
  std::string doctor_out;
  int ps_status = -1;              // `sandbox-run ps --json`
  std::string ps_out;
};

struct SeatReport {
  SeatHost host;
  std::vector<DoctorCheck> checks;  // reachable, host_key, version, seat_doctor, image, limits, capacity
  bool ok() const;
};

SeatProbe probe_seat(const SeatHost& host);  // the only part that talks to the seat
SeatReport seat_report(const SeatHost& host, const SeatProbe& probe, const std::string& registry_path);
std::string seat_doctor_text(const std::vector<SeatReport>& reports);
nlohmann::json seat_doctor_json(const std::vector<SeatReport>& reports, const std::string& registry_path);
// Loads the registry, probes every host in file order, prints; 0 when every seat passed,
// else the seat_preflight code (a registry that cannot be read: config).
int seat_doctor_main(const std::string& program, const std::string& registry_path, bool json);

}  // namespace asbx
