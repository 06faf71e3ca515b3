// `doctor`'s disk lines: per workspace root and git root of the seat, how a session's disk budget
// is kept there and how much room the floor leaves (docs/RESOURCES.md "Disk").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "launcher/doctor/doctor.h"
#include "plan/config.h"

namespace asbx {

// One line for a root, from its statfs figures (pure: tests give them).
DoctorCheck disk_check(const std::string& root, const std::string& fs_type, std::int64_t free_bytes,
                       std::int64_t free_inodes, const SeatConfig& seat);
void check_disk(const SeatConfig& seat, std::vector<DoctorCheck>& out);

}  // namespace asbx
