#include "launcher/pool/warm_limits.h"


#include "base/error.h"
#include "launcher/podman/cgroup_monitor.h"

namespace asbx {
namespace {

std::string first_word(const std::optional<std::string>& text) {
  if (!text) return "";
  std::size_t b = text->find_first_not_of(" \t\n"), e = text->find_first_of(" \t\n", b);
  return b == std::string::npos ? "" : text->substr(b, e == std::string::npos ? std::string::npos : e - b);
}

std::string figure(const nlohmann::json& want, const char* block, const char* key) {
  const nlohmann::json* b = want.contains(block) ? &want[block] : nullptr;
  return b && b->contains(key) && (*b)[key].is_number_integer() ? std::to_string((*b)[key].get<std::int64_t>()) : "";
}

// One row: the file under a controller's dir, and the figure it must hold.
struct Check {
  std::string dir, file, want;
};

std::vector<Check> checks(const nlohmann::json& want, const CgroupLocation& at) {
  std::string memory = figure(want, "memory", "limit"), pids = figure(want, "pids", "limit"), quota = figure(want, "cpu", "quota");
  if (at.version == "v2")  // cpu.weight is podman's conversion of the shares: not read back
    return {{at.memory, "memory.max", memory}, {at.memory, "memory.swap.max", memory.empty() ? "" : "0"},
            {at.pids, "pids.max", pids}, {at.cpu_limits, "cpu.max", quota}};
  return {{at.memory, "memory.limit_in_bytes", memory}, {at.memory, "memory.memsw.limit_in_bytes", figure(want, "memory", "swap")},
          {at.pids, "pids.max", pids}, {at.cpu_limits, "cpu.cfs_quota_us", quota},
          {at.cpu_limits, "cpu.cfs_period_us", figure(want, "cpu", "period")}, {at.cpu_limits, "cpu.shares", figure(want, "cpu", "shares")}};
}

}  // namespace

std::string limits_mismatch(const nlohmann::json& want, const CgroupLocation& at, const ReadFile& read) {
  if (at.version.empty()) return "the member's cgroup was not found";
  for (const auto& c : checks(want, at)) {
    if (c.want.empty()) continue;
    std::string got = first_word(read(c.dir + "/" + c.file));
    if (got.empty() && c.file == "memory.memsw.limit_in_bytes") continue;  // no swap accounting: no swap to limit
    if (got != c.want) return c.file + " is " + (got.empty() ? "unreadable" : got) + ", not " + c.want;
  }
  return "";
}

bool apply_warm_limits(PodmanApi& api, const std::string& id, const nlohmann::json& want, const std::string& had,
                       const CgroupLocation& at) {
  nlohmann::json before = nlohmann::json::parse(had, nullptr, false);
  if (before == want) return false;
  api.update(id, want);
  std::string why = limits_mismatch(want, at, read_small_file);
  if (!why.empty())
    throw Error(ErrorKind::limits_unenforced, "the warm member's cgroup does not hold the session's limits after podman's update (" +
                                                  why + "); nothing was started");
  return true;
}

}  // namespace asbx
