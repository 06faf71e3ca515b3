// doctor's lines on the seat kernel's knobs that seccomp cannot stand in for (docs/THREATS.md,
// "The kernel"). Warnings: each line passes (a seat may have reasons), its detail says the risk.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "launcher/doctor/doctor.h"

namespace asbx {

// `ldisc_autoload`, `ptrace_scope`: the files' contents (nullopt: the file is absent).
std::vector<DoctorCheck> kernel_knob_checks(const std::optional<std::string>& ldisc_autoload,
                                            const std::optional<std::string>& ptrace_scope);
void check_kernel_knobs(std::vector<DoctorCheck>& out);

}  // namespace asbx
