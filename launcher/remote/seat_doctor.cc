#include "launcher/remote/seat_doctor.h"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "base/error.h"
#include "launcher/remote/ssh_session.h"
#include "base/util.h"

namespace asbx {
namespace {

using nlohmann::json;
const std::string kProvision = "scripts/seat-host/provision-seat.sh (docs/INSTALL.md)";

DoctorCheck make(const std::string& name, bool ok, const std::string& detail, const std::string& remedy) {
  return {name, ok, detail, ok ? "" : remedy};
}

DoctorCheck not_checked(const std::string& name, const std::string& because) {
  return {name, false, "not checked (" + because + ")", "fix " + because + " first"};
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string where(const SeatHost& h) { return h.user + "@" + h.address + ":" + std::to_string(h.port); }

DoctorCheck version_check(const SeatProbe& p) {
  std::string want = std::string("sandbox-run ") + ASBX_VERSION;
  std::string got = first_line(p.version_out);
  if (p.version_status == 127)
    return make("version", false, "sandbox-run is not installed (exit 127)",
                "install the agent-sandbox package on the seat: " + kProvision);
  if (p.version_status != 0)  // a sandbox-run from before --version refuses the flag
    got = "sandbox-run answers no version (exit " + std::to_string(p.version_status) + ")";
  return make("version", got == want, got + (got == want ? "" : ", caller has " + want),
              "install agent-sandbox " + std::string(ASBX_VERSION) + " (the caller's .deb) on the seat: " + kProvision);
}

// The seat's own checks by name, from `sandbox-run doctor --json`.
std::vector<DoctorCheck> seat_checks(const json& doc) {
  std::vector<DoctorCheck> out;
  for (const auto& c : doc.value("checks", json::array()))
    out.push_back({c.value("name", ""), c.value("ok", false), c.value("detail", ""),
                   c["remedy"].is_string() ? c["remedy"].get<std::string>() : ""});
  return out;
}

void add_seat_doctor(const SeatProbe& p, std::vector<DoctorCheck>& out) {
  json doc = json::parse(p.doctor_out, nullptr, false);
  if (!doc.is_object()) {
    out.push_back(make("seat_doctor", false, "`sandbox-run doctor --json` gave no report (exit " +
                                                 std::to_string(p.doctor_status) + ")",
                       "run `sandbox-run doctor` on the seat as its user"));
    out.push_back(not_checked("image", "seat_doctor"));
    out.push_back(not_checked("limits", "seat_doctor"));
    return;
  }
  std::vector<std::string> failed, remedies;
  DoctorCheck image = not_checked("image", "seat_doctor"), limits = not_checked("limits", "seat_doctor");
  std::vector<DoctorCheck> disks;  // one per workspace/git root: how the budget is kept, the floor's room
  for (const auto& c : seat_checks(doc)) {
    if (c.name == "image") image = c;
    else if (c.name == "disk") disks.push_back(c);
    else if (c.name == "limits") limits = c;
    else if (!c.ok) failed.push_back(c.name + ": " + c.detail), remedies.push_back(c.remedy);
  }
  out.push_back(make("seat_doctor", failed.empty(), failed.empty() ? "sandbox-run doctor passed" : join(failed, "; "),
                     join(remedies, "; ")));
  out.push_back(image);
  out.push_back(limits);
  out.insert(out.end(), disks.begin(), disks.end());
}

DoctorCheck capacity_check(const SeatHost& h, const SeatProbe& p) {
  json sessions = json::parse(p.ps_out, nullptr, false);
  if (p.ps_status != 0 || !sessions.is_array())
    return make("capacity", false, "cannot list the seat's sessions (`sandbox-run ps --json` exit " +
                                       std::to_string(p.ps_status) + ")",
                "fix seat_doctor first");
  return make("capacity", true, std::to_string(sessions.size()) + "/" + std::to_string(h.capacity) + " sessions running", "");
}

}  // namespace

bool SeatReport::ok() const {
  for (const auto& c : checks)
    if (!c.ok) return false;
  return true;
}

SeatProbe probe_seat(const SeatHost& host) {
  SeatProbe p;
  try {
    SshConnection conn(host, SshOptions{5, 15});
    auto run = [&](const std::string& cmd, int& status, std::string& out) {
      Captured c = conn.capture(cmd);
      status = c.exit_status;
      out = c.out;
    };
    run("sandbox-run --version", p.version_status, p.version_out);
    if (p.version_status != 0) return p;
    run("sandbox-run doctor --json", p.doctor_status, p.doctor_out);
    run("sandbox-run ps --json", p.ps_status, p.ps_out);
  } catch (const Error& e) {
    p.connect_error = e.what();
    p.host_key_rejected = e.kind() == ErrorKind::host_key_rejected;
  }
  return p;
}

SeatReport seat_report(const SeatHost& h, const SeatProbe& p, const std::string& registry_path) {
  SeatReport r{h, {}};
  auto& out = r.checks;
  bool connected = p.connect_error.empty();
  out.push_back(make("reachable", connected || p.host_key_rejected,
                     connected || p.host_key_rejected ? where(h) + " answers ssh" : p.connect_error,
                     "check that sshd listens on " + h.address + ":" + std::to_string(h.port) + " and that user, "
                     "identity_file of '" + h.name + "' in " + registry_path + " are right"));
  if (!connected && !p.host_key_rejected) {
    for (const char* n : {"host_key", "version", "seat_doctor", "image", "limits", "capacity"})
      out.push_back(not_checked(n, "reachable"));
    return r;
  }
  out.push_back(make("host_key", !p.host_key_rejected, p.host_key_rejected ? p.connect_error : "matches the registry",
                     "confirm the seat's key out of band (ssh-keyscan -t ed25519 -p " + std::to_string(h.port) + " " +
                         h.address + " on the seat's console), then set host_key of '" + h.name + "' in " + registry_path));
  if (p.host_key_rejected) {
    for (const char* n : {"version", "seat_doctor", "image", "limits", "capacity"}) out.push_back(not_checked(n, "host_key"));
    return r;
  }
  out.push_back(version_check(p));
  if (p.version_status != 0) {
    for (const char* n : {"seat_doctor", "image", "limits", "capacity"}) out.push_back(not_checked(n, "version"));
    return r;
  }
  add_seat_doctor(p, out);
  out.push_back(capacity_check(h, p));
  return r;
}

std::string seat_doctor_text(const std::vector<SeatReport>& reports) {
  std::ostringstream out;
  int ready = 0;
  for (const auto& r : reports) {
    std::vector<std::string> parts;
    for (const auto& c : r.checks) parts.push_back(c.ok ? c.detail : c.name + " FAILED: " + c.detail);
    out << (r.ok() ? "ok    " : "FAIL  ") << r.host.name << "  " << join(parts, "; ") << "\n";
    for (const auto& c : r.checks)
      if (!c.ok && c.detail.rfind("not checked", 0) != 0) out << "      fix " << c.name << ": " << c.remedy << "\n";
    ready += r.ok();
  }
  out << ready << " of " << reports.size() << " seats ready\n";
  return out.str();
}

json seat_doctor_json(const std::vector<SeatReport>& reports, const std::string& registry_path) {
  json seats = json::array();
  bool all = true;
  for (const auto& r : reports) {
    json checks = doctor_json(r.checks)["checks"];
    seats.push_back({{"name", r.host.name}, {"address", r.host.address}, {"port", r.host.port}, {"ok", r.ok()},
                     {"checks", checks}});
    all = all && r.ok();
  }
  return {{"ok", all}, {"registry", registry_path}, {"caller_version", ASBX_VERSION}, {"seats", seats}};
}

int seat_doctor_main(const std::string& program, const std::string& registry_path, bool as_json) {
  std::vector<SeatReport> reports;
  try {
    Registry registry = load_registry(registry_path);
    for (const auto& host : registry.hosts) reports.push_back(seat_report(host, probe_seat(host), registry_path));
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: doctor: %s\n", program.c_str(), printable(e.what()).c_str());
    return e.exit_code();
  }
  if (as_json) std::cout << seat_doctor_json(reports, registry_path).dump(2) << std::endl;
  else std::cout << seat_doctor_text(reports) << std::flush;
  bool all = !reports.empty();
  for (const auto& r : reports) all = all && r.ok();
  return all ? 0 : exit_code_of(ErrorKind::seat_preflight);
}

}  // namespace asbx
