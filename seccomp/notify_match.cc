#include "seccomp/notify_match.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <utility>

#include "seccomp/syscall_numbers.h"

namespace asbx {
namespace {

struct Target {
  int call;
  std::vector<const SeccompRow*> rows;  // every recorded row naming the call (socket has two)
};

// (audit arch, nr) -> the recorded rows that name the call. Built once from the table.
const std::map<std::pair<std::uint32_t, long>, Target>& targets() {
  static const auto map = [] {
    std::map<std::pair<std::uint32_t, long>, Target> out;
    const auto& names = recorded_call_names();
    for (const auto& arch : table_call_numbers())
      for (const auto& c : arch.calls) {
        auto at = std::find(names.begin(), names.end(), c.name);
        if (c.nr < 0 || at == names.end()) continue;
        Target t{int(at - names.begin()), {}};
        for (const auto& row : seccomp_table())
          if (row.recorded && std::find(row.calls.begin(), row.calls.end(), c.name) != row.calls.end()) t.rows.push_back(&row);
        if (!t.rows.empty()) out.emplace(std::make_pair(arch.audit_arch, c.nr), std::move(t));
      }
    return out;
  }();
  return map;
}

const char* clone_flag_name(std::uint64_t flag) {
  static const std::pair<std::uint64_t, const char*> names[] = {
      {0x00020000, "CLONE_NEWNS"},  {0x02000000, "CLONE_NEWCGROUP"}, {0x04000000, "CLONE_NEWUTS"},
      {0x08000000, "CLONE_NEWIPC"}, {0x10000000, "CLONE_NEWUSER"},   {0x20000000, "CLONE_NEWPID"},
      {0x40000000, "CLONE_NEWNET"}};
  for (const auto& [bit, name] : names)
    if (bit == flag) return name;
  return "CLONE_NEW?";
}

bool inet(std::uint64_t family) { return family == 2 || family == 10; }  // AF_INET, AF_INET6

// Which of the call's rows refused it: socket's family rule refuses every family but AF_INET/AF_INET6
// (and the allowed ones), its type rule only those two: disjoint, as the profile renders them.
const SeccompRow* row_of(const Target& t, const std::uint64_t* args) {
  for (const SeccompRow* row : t.rows) {
    if (row->match == SeccompMatch::socket_family && inet(args[0])) continue;
    if (row->match == SeccompMatch::inet_type && !inet(args[0])) continue;
    return row;
  }
  return t.rows.front();
}

}  // namespace

const std::vector<std::string>& recorded_call_names() {
  static const auto names = [] {
    std::vector<std::string> out;
    for (const auto& row : seccomp_table())
      if (row.recorded)
        for (const auto& c : row.calls)
          if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    return out;
  }();
  return names;
}

RefusedCall match_refused_call(std::uint32_t audit_arch, std::int32_t nr, const std::uint64_t* args) {
  RefusedCall out;
  out.errno_value = EPERM;
  auto it = targets().find({audit_arch, nr});
  if (it == targets().end()) return out;
  out.call = it->second.call;
  const SeccompRow& row = *row_of(it->second, args);
  out.errno_value = row.errno_value;
  if (row.match == SeccompMatch::socket_family || row.match == SeccompMatch::inet_type) out.family = args[0] < std::uint64_t(kAfMax) ? int(args[0]) : kAfMax;
  if (row.match == SeccompMatch::clone_new_ns) out.clone_flags = args[0] & kCloneNewMask;
  return out;
}

RefusedCall match_sentry_refusal(long nr) {
  RefusedCall out;
  const auto& arches = table_call_numbers();
  if (arches.empty() || nr < 0 || nr > 0x7fffffff) return out;
  auto it = targets().find({arches.front().audit_arch, nr});  // the native audit arch (x32's numbers share it)
  if (it == targets().end()) return out;
  out.call = it->second.call;
  out.errno_value = it->second.rows.front()->errno_value;
  for (const SeccompRow* row : it->second.rows) out.by_arguments |= row->match != SeccompMatch::always;
  return out;
}

std::string family_bucket_name(int bucket) {
  if (bucket >= kAfMax) return "AF_" + std::to_string(kAfMax) + "+";
  return socket_family_name(std::uint64_t(bucket < 0 ? 0 : bucket));
}

std::string describe_refused(const RefusedCall& call) {
  if (call.call < 0) return "other";
  std::string out = recorded_call_names()[call.call];
  if (call.family >= 0) return out + "(" + family_bucket_name(call.family) + ")";
  if (call.clone_flags == 0) return out;
  std::string flags;
  for (std::uint64_t flag : clone_new_flags())
    if (call.clone_flags & flag) flags += (flags.empty() ? "" : "|") + std::string(clone_flag_name(flag));
  return out + "(" + flags + ")";
}

}  // namespace asbx
