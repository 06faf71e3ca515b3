#include "launcher/doctor/doctor_disk.h"

#include <cstdio>
#include <sys/statvfs.h>
#include <sys/vfs.h>

#include "base/units.h"

namespace asbx {
namespace {

std::string fs_type_name(long magic) {
  switch (magic) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs";
    case 0x794c7630: return "overlay";
    default: return "fs 0x" + [&] { char b[20]; std::snprintf(b, sizeof b, "%lx", magic); return std::string(b); }();
  }
}

}  // namespace

DoctorCheck disk_check(const std::string& root, const std::string& fs_type, std::int64_t free_bytes,
                       std::int64_t free_inodes, const SeatConfig& seat) {
  std::int64_t floor = parse_size(seat.disk_floor, "disk_floor");
  bool ok = free_bytes >= floor && free_inodes >= seat.disk_floor_inodes;
  std::string room = free_bytes >= floor ? format_size(free_bytes - floor) + " above the floor" : "BELOW the floor";
  std::string inodes = free_inodes >= seat.disk_floor_inodes
                           ? std::to_string(free_inodes - seat.disk_floor_inodes) + " inodes above it"
                           : "inodes BELOW it";
  std::string detail = root + " (" + fs_type + "): budget " + seat.disk + " / " + std::to_string(seat.disk_inodes) +
                       " inodes per session, kept by the launcher's watcher (no quota on this kernel); " +
                       format_size(free_bytes) + " and " + std::to_string(free_inodes) + " inodes free, floor " +
                       seat.disk_floor + " / " + std::to_string(seat.disk_floor_inodes) + ": " + room + ", " + inodes;
  return {"disk", ok, detail, ok ? "" : "free space on " + root + " (sessions there are refused with 232 until then)"};
}

void check_disk(const SeatConfig& seat, std::vector<DoctorCheck>& out) {
  std::vector<std::string> roots = seat.workspace_roots.empty() ? std::vector<std::string>{seat.workspace_root} : seat.workspace_roots;
  roots.insert(roots.end(), seat.git_roots.begin(), seat.git_roots.end());
  for (const auto& root : roots) {
    struct statvfs v{};
    struct statfs f{};
    if (::statvfs(root.c_str(), &v) != 0 || ::statfs(root.c_str(), &f) != 0) {
      out.push_back({"disk", true, root + ": not there (no session can use it yet)", ""});
      continue;
    }
    out.push_back(disk_check(root, fs_type_name(static_cast<long>(f.f_type)),
                             static_cast<std::int64_t>(v.f_bavail) * static_cast<std::int64_t>(v.f_frsize),
                             static_cast<std::int64_t>(v.f_favail), seat));
  }
}

}  // namespace asbx
