// The caller-side doctor's verdicts from what a seat answered (launcher/remote/seat_doctor.h).
#include <doctest/doctest.h>

#include "launcher/remote/seat_doctor.h"

using namespace asbx;

namespace {

SeatHost host() {
  SeatHost h;
  h.name = "s-1";
  h.address = "127.0.0.1";
  h.port = 22001;
  h.user = "seat";
  h.capacity = 4;
  return h;
}

const char* kDoctorWaived = R"J({"ok": true, "checks": [
  {"name": "seat_config", "ok": true, "detail": "/home/seat/.config/agent-sandbox/seat.toml", "remedy": null},
  {"name": "podman_socket", "ok": true, "detail": "answers", "remedy": null},
  {"name": "image", "ok": true, "detail": "localhost/agent-sandbox:latest is present", "remedy": null},
  {"name": "limits", "ok": true, "detail": "NOT enforced (cgroup v1: rootless podman ignores every limit); waived in x", "remedy": null}]})J";

SeatProbe healthy() {
  SeatProbe p;
  p.version_status = 0;
  p.version_out = std::string("sandbox-run ") + ASBX_VERSION + "\n";
  p.doctor_status = 0;
  p.doctor_out = kDoctorWaived;
  p.ps_status = 0;
  p.ps_out = "[{\"session\": \"a\"}]";
  return p;
}

const DoctorCheck& named(const SeatReport& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return c;
  FAIL("no check " << name);
  return r.checks.front();
}

}  // namespace

TEST_CASE("seat doctor: a healthy seat passes every check, in order, on one line") {
  SeatReport r = seat_report(host(), healthy(), "reg.toml");
  CHECK(r.ok());
  std::vector<std::string> names;
  for (const auto& c : r.checks) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"reachable", "host_key", "version", "seat_doctor", "image", "limits", "capacity"});
  CHECK(named(r, "capacity").detail == "1/4 sessions running");
  std::string text = seat_doctor_text({r});
  CHECK(text.rfind("ok    s-1  seat@127.0.0.1:22001 answers ssh; matches the registry; sandbox-run ", 0) == 0);
  CHECK(text.find("waived in x; 1/4 sessions running\n1 of 1 seats ready\n") != std::string::npos);
}

TEST_CASE("seat doctor: an unreachable seat names the cause and checks nothing else") {
  SeatProbe p;
  p.connect_error = "s-1 (127.0.0.1:22001): cannot connect: Connection refused";
  SeatReport r = seat_report(host(), p, "reg.toml");
  CHECK_FALSE(r.ok());
  CHECK(named(r, "reachable").detail == p.connect_error);
  CHECK(named(r, "reachable").remedy ==
        "check that sshd listens on 127.0.0.1:22001 and that user, identity_file of 's-1' in reg.toml are right");
  CHECK(named(r, "version").detail == "not checked (reachable)");
  CHECK(seat_doctor_json({r}, "reg.toml")["ok"] == false);
}

TEST_CASE("seat doctor: a changed host key fails host_key, not reachable") {
  SeatProbe p;
  p.connect_error = "s-1 (127.0.0.1:22001): host key changed";
  p.host_key_rejected = true;
  SeatReport r = seat_report(host(), p, "reg.toml");
  CHECK(named(r, "reachable").ok);
  CHECK_FALSE(named(r, "host_key").ok);
  CHECK(named(r, "host_key").remedy.find("set host_key of 's-1' in reg.toml") != std::string::npos);
}

TEST_CASE("seat doctor: sandbox-run missing or of another version") {
  SeatProbe missing;
  missing.version_status = 127;
  SeatReport r = seat_report(host(), missing, "reg.toml");
  CHECK(named(r, "version").detail == "sandbox-run is not installed (exit 127)");
  CHECK(named(r, "version").remedy ==
        "install the agent-sandbox package on the seat: scripts/seat-host/provision-seat.sh (docs/INSTALL.md)");
  SeatProbe old = healthy();
  old.version_out = "sandbox-run 0.0.1\n";
  SeatReport o = seat_report(host(), old, "reg.toml");
  CHECK(named(o, "version").detail == std::string("sandbox-run 0.0.1, caller has sandbox-run ") + ASBX_VERSION);
  CHECK_FALSE(o.ok());
}

TEST_CASE("seat doctor: the seat's own failures carry its remedies; image and limits get their own lines") {
  SeatProbe p = healthy();
  p.doctor_status = 215;
  p.doctor_out = R"J({"ok": false, "checks": [
    {"name": "linger", "ok": false, "detail": "user seat does not linger", "remedy": "loginctl enable-linger seat"},
    {"name": "image", "ok": false, "detail": "img is missing", "remedy": "podman load -i agent-image.tar"},
    {"name": "limits", "ok": false, "detail": "NOT enforced (cgroup v1)", "remedy": "set waive_unenforced_limits"}]})J";
  SeatReport r = seat_report(host(), p, "reg.toml");
  CHECK(named(r, "seat_doctor").detail == "linger: user seat does not linger");
  CHECK(named(r, "seat_doctor").remedy == "loginctl enable-linger seat");
  CHECK(named(r, "image").remedy == "podman load -i agent-image.tar");
  CHECK_FALSE(named(r, "limits").ok);
  std::string text = seat_doctor_text({r});
  CHECK(text.find("\n      fix seat_doctor: loginctl enable-linger seat\n") != std::string::npos);
  CHECK(text.find("0 of 1 seats ready") != std::string::npos);
}
