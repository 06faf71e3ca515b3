// doctor's lines on the seat kernel's knobs (launcher/doctor/doctor_kernel.h): warnings that never fail.
#include <doctest/doctest.h>

#include "launcher/doctor/doctor_kernel.h"

using namespace asbx;

TEST_CASE("doctor: the kernel knobs: ldisc_autoload and ptrace_scope, said and never failed") {
  auto open = kernel_knob_checks(std::string("1\n"), std::nullopt);
  REQUIRE(open.size() == 2);
  CHECK(open[0].name == "ldisc_autoload");
  CHECK(open[0].ok);
  CHECK(open[0].detail.rfind("dev.tty.ldisc_autoload = 1; warning: a session's ioctl(TIOCSETD)", 0) == 0);
  CHECK(open[1].name == "ptrace_scope");
  CHECK(open[1].ok);
  CHECK(open[1].detail.rfind("kernel.yama.ptrace_scope = absent; warning: a session's processes can write each "
                             "other's memory through /proc/PID/mem",
                             0) == 0);
  auto closed = kernel_knob_checks(std::string("0\n"), std::string("1\n"));
  CHECK(closed[0].detail == "dev.tty.ldisc_autoload = 0");
  CHECK(closed[1].detail == "kernel.yama.ptrace_scope = 1");
  CHECK(kernel_knob_checks(std::nullopt, std::string("0"))[1].detail.find("warning") != std::string::npos);
  CHECK(doctor_exit_code(open) == 0);
}
