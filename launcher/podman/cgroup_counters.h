// Pure parsing of the kernel's cgroup counter files (v1 and v2) and the rule that
// names a session's cause. No I/O here: cgroup_monitor.cc reads the files.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace asbx {

// Where a process's cgroup lives, from /proc/<pid>/cgroup.
struct CgroupLocation {
  std::string version;  // "v1" or "v2"; "" when neither could be found
  std::string memory;   // v1: the memory controller's dir; v2: the unified dir
  std::string pids;     // v1: the pids controller's dir; v2: same as memory
  std::string cpu;      // v1: the cpuacct controller's dir; v2: same as memory
  std::string freezer;  // v1: the freezer controller's dir ("" without one); v2: same as memory
  std::string cpu_limits;  // v1: the cpu controller's dir (its quota); v2: same as memory
};

// One reading of the counters; -1 where a file was absent.
struct CgroupSample {
  std::int64_t oom_kills = -1;      // v1 memory.oom_control oom_kill; v2 memory.events oom_kill
  std::int64_t pids_refused = -1;   // pids.events max
  std::int64_t memory_peak = -1;    // v1 memory.max_usage_in_bytes; v2 memory.peak
  std::int64_t pids_current = -1;   // pids.current
  std::int64_t pids_peak = -1;      // v2 pids.peak (newer kernels)
  std::int64_t cpu_usage_ns = -1;   // v1 cpuacct.usage; v2 cpu.stat usage_usec * 1000
};

// "key value" lines (memory.events, pids.events, memory.oom_control, cpu.stat).
std::map<std::string, std::int64_t> parse_keyed(const std::string& text);
// A file holding one number (memory.peak, pids.current); nullopt for "max" or garbage.
std::optional<std::int64_t> parse_number(const std::string& text);

// Picks v1 when a v1 hierarchy carries the memory controller (hybrid hosts), else v2.
// `root` is the cgroup mount root, normally /sys/fs/cgroup.
CgroupLocation locate_cgroup(const std::string& proc_cgroup, const std::string& root);

// The counter files of one version, by name relative to a location's dirs.
// `read` returns a file's text or nullopt.
using ReadFile = std::function<std::optional<std::string>(const std::string& path)>;
CgroupSample sample_from(const CgroupLocation& at, const ReadFile& read);

// Folds a sample into the session's counters: maxima for peaks, latest for totals.
void fold_sample(KillCounters& into, const CgroupSample& sample);

// The one rule for `cause` when several things happened: the launcher's own kill
// (timeout or signal, whichever the session saw first) ended the session, so it wins;
// otherwise an OOM kill, then a refused fork. "" when nothing happened.
std::string decide_cause(const std::string& launcher_cause, const KillCounters& counters);

}  // namespace asbx
