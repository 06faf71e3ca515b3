#include "launcher/doctor/doctor_runsc.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/error.h"
#include "base/request.h"
#include "launcher/lifecycle/session.h"
#include "launcher/podman/podman_api.h"
#include "plan/build_plan.h"
#include "plan/isolation.h"

namespace asbx {
namespace {

constexpr unsigned long kKvmCreateVm = 0xAE01;

// runsc's version as the seat's runsc podman service reports it (the launcher runs no host
// program itself): "" when runsc is not installed or that service does not answer.
std::string runsc_version(const std::string& binary, const SeatConfig& seat) {
  if (::access(binary.c_str(), X_OK) != 0) return "";
  try {
    nlohmann::json rt = PodmanApi(runsc_socket(seat)).info()["host"]["ociRuntime"];
    std::string v = rt.value("version", "");
    return v.substr(0, v.find('\n'));
  } catch (const std::exception&) {
    return "";
  }
}

// Can this process create a VM? (What kvm needs first; runsc may still not boot on it: nested
// virtualisation can hang the sentry, so kvm is never chosen for the seat, only reported.)
bool kvm_opens() {
  int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  int vm = ::ioctl(fd, kKvmCreateVm, 0);
  if (vm >= 0) ::close(vm);
  ::close(fd);
  return vm >= 0;
}

// A trivial container under runsc, the way a session makes it (create body, gofer, seat tmpfs HOME);
// `ls -ld /` rather than `true`: it fails under Debian's sentry unless the compat shim is preloaded.
DoctorCheck trivial_session(const SeatConfig& seat, const UserFacts& user, bool required) {
  Request req;
  req.id = "doctor-runsc-" + std::to_string(::getpid());
  req.isolation = "gvisor";
  req.timeout = "60s";
  req.argv = {"ls", "-ld", "/"};
  try {
    LaunchPlan plan = build_plan(req, seat, user, current_session_facts());
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    SessionResult r = run_session(plan, StdioFds{null, null, null});
    ::close(null);
    bool ok = r.outcome == "exited" && r.exit_code == 0;
    std::string detail = ok ? "`ls -ld /` ran under runsc (" + plan.isolation.platform + ") in " + std::to_string(r.total_ms) + " ms"
                            : "`ls -ld /` under runsc: " + (r.message.empty() ? "exit " + std::to_string(r.exit_code) : r.message);
    // Only a seat that requires gVisor fails here; elsewhere --isolation gvisor is what would fail.
    return {"runsc_session", ok || !required, detail, ok ? "" : "see the message; sessions that need gVisor are refused (231)"};
  } catch (const Error& e) {
    return {"runsc_session", !required, e.what(), "install runsc, the project's wrappers (runsc_dir) and its podman service (runsc_socket)"};
  }
}

}  // namespace

void check_runsc(const SeatConfig& seat, const UserFacts& user, std::vector<DoctorCheck>& out) {
  const OciRuntimeRow& row = oci_runtime_row("runsc");
  bool required = seat.oci_runtime == "runsc";
  std::string version = runsc_version(row.binary, seat);
  if (version.empty()) {
    std::string detail = row.binary + " is not installed or its podman service (" + runsc_socket(seat) + ") does not answer; " +
                         (required ? "the seat requires it: every session is refused (231)" : "--isolation gvisor is refused (231)");
    out.push_back({"runsc", !required, detail,
                   "apt-get install runsc; then its podman service: systemctl enable --now agent-sandbox-runsc.socket "
                   "(the package's), or scripts/podman-service.sh start (a source checkout)"});
    return;
  }
  out.push_back({"runsc", true, version + (required ? " (the seat requires it)" : " (on request: --isolation gvisor)"), ""});
  std::string kvm = kvm_opens() ? "/dev/kvm creates VMs (try runsc_platform = \"kvm\" if runsc boots on it)" : "no usable /dev/kvm";
  out.push_back({"runsc_platform", true, seat.runsc_platform + " (wrapper " + runsc_wrapper(seat) + "); " + kvm, ""});
  if (user.uid == 0) out.push_back(trivial_session(seat, user, required));
}

}  // namespace asbx
