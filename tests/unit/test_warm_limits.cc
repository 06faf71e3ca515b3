// A warm session's limits read back from its member's cgroup (launcher/pool/warm_limits.h): every
// figure of the plan's resources block must be in the cgroup's file, or the session is refused
// naming the first that is not.
#include <doctest/doctest.h>

#include <map>

#include "launcher/pool/warm_limits.h"

using namespace asbx;

namespace {

const nlohmann::json kWant = {{"memory", {{"limit", 1073741824}, {"swap", 1073741824}}},
                              {"cpu", {{"quota", 150000}, {"period", 100000}, {"shares", 100}}},
                              {"pids", {{"limit", 100}}}};

CgroupLocation v1() { return {"v1", "/m", "/p", "/a", "/f", "/c"}; }

std::map<std::string, std::string> v1_files() {
  return {{"/m/memory.limit_in_bytes", "1073741824\n"}, {"/m/memory.memsw.limit_in_bytes", "1073741824\n"},
          {"/p/pids.max", "100\n"}, {"/c/cpu.cfs_quota_us", "150000\n"}, {"/c/cpu.cfs_period_us", "100000\n"},
          {"/c/cpu.shares", "100\n"}};
}

ReadFile reader(const std::map<std::string, std::string>& files) {
  return [files](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace

TEST_CASE("warm limits: a cgroup that holds every figure is no mismatch") {
  CHECK(limits_mismatch(kWant, v1(), reader(v1_files())) == "");
}

TEST_CASE("warm limits: the first figure that differs or cannot be read is named") {
  auto files = v1_files();
  files["/m/memory.memsw.limit_in_bytes"] = "2147483648\n";  // the limit alone updated: swap allowed
  CHECK(limits_mismatch(kWant, v1(), reader(files)) == "memory.memsw.limit_in_bytes is 2147483648, not 1073741824");
  files = v1_files();
  files["/c/cpu.shares"] = "1024\n";
  CHECK(limits_mismatch(kWant, v1(), reader(files)) == "cpu.shares is 1024, not 100");
  files = v1_files();
  files.erase("/p/pids.max");
  CHECK(limits_mismatch(kWant, v1(), reader(files)) == "pids.max is unreadable, not 100");
}

TEST_CASE("warm limits: no swap accounting is no swap to limit; no cgroup found refuses") {
  auto files = v1_files();
  files.erase("/m/memory.memsw.limit_in_bytes");
  CHECK(limits_mismatch(kWant, v1(), reader(files)) == "");
  CHECK(limits_mismatch(kWant, CgroupLocation{}, reader(files)) == "the member's cgroup was not found");
}

TEST_CASE("warm limits: v2 reads memory.max, memory.swap.max, pids.max and cpu.max's quota") {
  CgroupLocation at{"v2", "/u", "/u", "/u", "/u", "/u"};
  std::map<std::string, std::string> files = {
      {"/u/memory.max", "1073741824\n"}, {"/u/memory.swap.max", "0\n"}, {"/u/pids.max", "100\n"}, {"/u/cpu.max", "150000 100000\n"}};
  CHECK(limits_mismatch(kWant, at, reader(files)) == "");
  files["/u/memory.swap.max"] = "max\n";
  CHECK(limits_mismatch(kWant, at, reader(files)) == "memory.swap.max is max, not 0");
}
