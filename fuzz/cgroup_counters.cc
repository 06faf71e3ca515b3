// cgroup counter parsing (launcher/podman/cgroup_counters.cc). The input is split at NUL bytes: the
// first part is /proc/<pid>/cgroup, the rest are the counter files in the order they are read.
// Properties: numbers are never negative, dirs stay under the root, samples are -1 or >= 0,
// and no input throws.
#include "fuzz/fuzz.h"
#include "launcher/podman/cgroup_counters.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  const std::vector<std::string> parts = asbx::fuzz::parts(asbx::fuzz::text(data, size));
  for (const auto& p : parts) {
    if (auto n = asbx::parse_number(p); n && *n < 0) violated("negative number from " + p);
    for (const auto& [key, value] : asbx::parse_keyed(p))
      if (value < 0) violated("negative counter " + key);
  }
  const std::string root = "/sys/fs/cgroup";
  asbx::CgroupLocation at = asbx::locate_cgroup(parts[0], root);
  if (at.version != "" && at.version != "v1" && at.version != "v2") violated("unknown version " + at.version);
  for (const auto* dir : {&at.memory, &at.pids, &at.cpu})
    if (!dir->empty() && dir->rfind(root, 0) != 0) violated("dir outside the root: " + *dir);
  std::size_t next = 1;
  asbx::CgroupSample s = asbx::sample_from(at, [&](const std::string&) -> std::optional<std::string> {
    if (next >= parts.size()) return std::nullopt;
    return parts[next++];
  });
  for (std::int64_t v : {s.oom_kills, s.pids_refused, s.memory_peak, s.pids_current, s.pids_peak, s.cpu_usage_ns})
    if (v < -1) violated("sample below -1");
  asbx::KillCounters counters;
  asbx::fold_sample(counters, s);
  asbx::decide_cause("", counters);
  return 0;
}
