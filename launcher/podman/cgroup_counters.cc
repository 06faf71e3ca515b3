#include "launcher/podman/cgroup_counters.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace asbx {

std::map<std::string, std::int64_t> parse_keyed(const std::string& text) {
  std::map<std::string, std::int64_t> out;
  std::istringstream lines(text);
  std::string key, value;
  while (lines >> key >> value) {
    if (auto n = parse_number(value)) out[key] = *n;
  }
  return out;
}

std::optional<std::int64_t> parse_number(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \n\t");
  if (end == std::string::npos) return std::nullopt;
  std::string digits = text.substr(0, end + 1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  try {
    return std::stoll(digits);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {

// One line "ID:CONTROLLERS:PATH" of /proc/<pid>/cgroup.
struct CgroupLine {
  std::string controllers;
  std::string path;
};

std::vector<CgroupLine> cgroup_lines(const std::string& text) {
  std::vector<CgroupLine> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto a = line.find(':');
    auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b != std::string::npos) out.push_back({line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

bool lists(const std::string& controllers, const std::string& name) {
  std::istringstream in(controllers);
  for (std::string c; std::getline(in, c, ',');)
    if (c == name) return true;
  return false;
}

// v1: the dir of the hierarchy carrying `name`, mounted under its (comma) list name.
std::string v1_dir(const std::vector<CgroupLine>& lines, const std::string& name, const std::string& root) {
  for (const auto& l : lines)
    if (lists(l.controllers, name)) return root + "/" + l.controllers + l.path;
  return "";
}

}  // namespace

CgroupLocation locate_cgroup(const std::string& proc_cgroup, const std::string& root) {
  auto lines = cgroup_lines(proc_cgroup);
  CgroupLocation at;
  if (std::string mem = v1_dir(lines, "memory", root); !mem.empty()) {
    at = {"v1", mem, v1_dir(lines, "pids", root), v1_dir(lines, "cpuacct", root), v1_dir(lines, "freezer", root),
          v1_dir(lines, "cpu", root)};
    return at;
  }
  for (const auto& l : lines)
    if (l.controllers.empty()) {
      std::string dir = root + (l.path == "/" ? "" : l.path);
      at = {"v2", dir, dir, dir, dir, dir};
    }
  return at;
}

CgroupSample sample_from(const CgroupLocation& at, const ReadFile& read) {
  CgroupSample s;
  auto keyed = [&](const std::string& file, const char* key) -> std::int64_t {
    auto text = read(file);
    if (!text) return -1;
    auto m = parse_keyed(*text);
    auto it = m.find(key);
    return it == m.end() ? -1 : it->second;
  };
  auto number = [&](const std::string& file) -> std::int64_t {
    auto text = read(file);
    auto n = text ? parse_number(*text) : std::nullopt;
    return n ? *n : -1;
  };
  s.pids_refused = keyed(at.pids + "/pids.events", "max");
  s.pids_current = number(at.pids + "/pids.current");
  if (at.version == "v1") {
    s.oom_kills = keyed(at.memory + "/memory.oom_control", "oom_kill");
    s.memory_peak = number(at.memory + "/memory.max_usage_in_bytes");
    s.cpu_usage_ns = number(at.cpu + "/cpuacct.usage");
    return s;
  }
  s.oom_kills = keyed(at.memory + "/memory.events", "oom_kill");
  s.memory_peak = number(at.memory + "/memory.peak");
  s.pids_peak = number(at.pids + "/pids.peak");
  std::int64_t usec = keyed(at.cpu + "/cpu.stat", "usage_usec");
  // Saturate rather than overflow (undefined behaviour) on an absurd reading.
  constexpr std::int64_t kMaxUsec = std::numeric_limits<std::int64_t>::max() / 1000;
  s.cpu_usage_ns = usec < 0 ? -1 : usec > kMaxUsec ? std::numeric_limits<std::int64_t>::max() : usec * 1000;
  return s;
}

void fold_sample(KillCounters& into, const CgroupSample& s) {
  // Totals only grow while the cgroup lives, so the largest reading is the latest.
  into.oom_kills = std::max(into.oom_kills, s.oom_kills);
  into.pids_refused = std::max(into.pids_refused, s.pids_refused);
  into.memory_peak_bytes = std::max(into.memory_peak_bytes, s.memory_peak);
  into.pids_peak = std::max({into.pids_peak, s.pids_peak, s.pids_current});
  into.cpu_usage_ns = std::max(into.cpu_usage_ns, s.cpu_usage_ns);
  into.oom_killed = into.oom_killed || into.oom_kills > 0;
}

std::string decide_cause(const std::string& launcher_cause, const KillCounters& c) {
  if (!launcher_cause.empty()) return launcher_cause;
  if (c.oom_killed || c.oom_kills > 0) return "oom";
  if (c.pids_refused > 0) return "pids";
  return "";
}

}  // namespace asbx
