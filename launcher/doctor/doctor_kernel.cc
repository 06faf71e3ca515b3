#include "launcher/doctor/doctor_kernel.h"

#include "base/fdio.h"

namespace asbx {

namespace {

std::string value_of(const std::optional<std::string>& text) {
  if (!text) return "absent";
  std::string v = *text;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

}  // namespace

std::vector<DoctorCheck> kernel_knob_checks(const std::optional<std::string>& ldisc_autoload,
                                            const std::optional<std::string>& ptrace_scope) {
  std::vector<DoctorCheck> out;
  std::string ldisc = value_of(ldisc_autoload);
  out.push_back({"ldisc_autoload", true,
                 "dev.tty.ldisc_autoload = " + ldisc +
                     (ldisc == "0" || ldisc == "absent"
                          ? ""
                          : "; warning: a session's ioctl(TIOCSETD) on its pty loads any line discipline module "
                            "(N_HDLC: CVE-2017-2636, n_gsm); set it to 0 (sysctl dev.tty.ldisc_autoload=0)"),
                 ""});
  std::string yama = value_of(ptrace_scope);
  bool weak = yama == "absent" || yama == "0";
  out.push_back({"ptrace_scope", true,
                 "kernel.yama.ptrace_scope = " + yama +
                     (weak ? "; warning: a session's processes can write each other's memory through /proc/PID/mem "
                             "(seccomp cannot refuse it); 1 or more closes it (a kernel with YAMA, "
                             "sysctl kernel.yama.ptrace_scope=1)"
                           : ""),
                 ""});
  return out;
}

void check_kernel_knobs(std::vector<DoctorCheck>& out) {
  for (auto& c : kernel_knob_checks(read_text_file("/proc/sys/dev/tty/ldisc_autoload"),
                                    read_text_file("/proc/sys/kernel/yama/ptrace_scope")))
    out.push_back(std::move(c));
}

}  // namespace asbx
