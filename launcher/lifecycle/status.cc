#include "launcher/lifecycle/status.h"

#include "base/util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/lifecycle/credential_record.h"
#include "launcher/lifecycle/diagnostics.h"
#include "base/beneath.h"
#include "base/fdio.h"
#include "launcher/lifecycle/safe_files.h"
#include "base/units.h"

namespace asbx {
namespace {

using nlohmann::json;

// The warnings carry the agent's names: the record gets them as the caller's terminal does.
json printable_lines(const std::vector<std::string>& lines) {
  json out = json::array();
  for (const auto& l : lines) out.push_back(printable(l));
  return out;
}

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json limits_json(const LaunchPlan& plan, const SessionResult& r) {
  return {{"memory", format_size(plan.limits.memory_bytes)}, {"memory_bytes", plan.limits.memory_bytes},
          {"pids", plan.limits.pids},  {"cpus", plan.limits.cpus},
          {"cpu_shares", plan.limits.cpu_shares}, {"timeout_ms", plan.timeout_ms},
          {"disk", format_size(plan.limits.disk_bytes)}, {"disk_bytes", plan.limits.disk_bytes},
          {"disk_inodes", plan.limits.disk_inodes},
          {"enforced", r.limits_enforced},
          {"waiver", plan.waive_unenforced_limits && !r.limits_enforced ? or_null(plan.waiver_source) : json(nullptr)}};
}

json counters_json(const KillCounters& c) {
  auto opt = [](std::int64_t v) { return v < 0 ? json(nullptr) : json(v); };
  return {{"cgroup_version", or_null(c.cgroup_version)}, {"oom_killed", c.oom_killed}, {"oom_kills", c.oom_kills},
          {"pids_refused", c.pids_refused},          {"memory_peak_bytes", opt(c.memory_peak_bytes)},
          {"pids_peak", opt(c.pids_peak)},           {"cpu_usage_ns", opt(c.cpu_usage_ns)}};
}

// Messages and argv0 quote what the caller passed, which need not be UTF-8: such bytes become
// U+FFFD rather than an exception that would lose the record (and the exit code with it).
std::string as_text(const json& record, int indent) {
  return record.dump(indent, ' ', false, json::error_handler_t::replace);
}

// Which wall the session had (docs/ISOLATION.md).
json isolation_record(const LaunchPlan& plan) {
  const Isolation& i = plan.isolation;
  return {{"wall", i.wall}, {"platform", or_null(i.platform)}, {"required_by", or_null(i.required_by)},
          {"sandbox_pids", i.sandbox_pids > 0 ? json(i.sandbox_pids) : json(nullptr)},
          {"user_namespace", i.user_namespace}};
}

}  // namespace

json durations_json(const SessionResult& r) {
  json phases = json::object();
  for (const auto& [name, ms] : r.phase_ms) phases[name] = ms;
  return {{"setup", r.setup_ms}, {"run", r.run_ms}, {"total", r.total_ms}, {"phases", phases}};
}

json status_record(const LaunchPlan& plan, const SessionResult& r) {
  return {
      {"id", plan.session_id},
      {"outcome", r.outcome},
      {"exit_code", r.exit_code},
      {"agent_exit_code", r.agent_exit_code ? json(*r.agent_exit_code) : json(nullptr)},
      {"error_kind", r.error_kind ? json(name_of(*r.error_kind)) : json(nullptr)},
      {"message", or_null(printable(r.message))},
      {"failed", r.outcome == "launcher_error" ? json("launcher") : r.outcome == "killed" ? json("killed") : json(nullptr)},
      {"cause", or_null(r.cause)},
      {"signal", r.signal ? json(r.signal) : json(nullptr)},
      {"counters", counters_json(r.counters)},
      {"image", plan.image},
      {"argv0", plan.argv.empty() ? "" : plan.argv[0]},
      {"runtime", or_null(plan.runtime)},
      {"inner_sandbox", plan.inner_sandbox},
      {"credential_refreshed_in_container", r.credential_refreshed_in_container},
      {"credential_refresh_expected", refresh_expected_json(plan, r)},
      {"credentials", credentials_json(plan, r)},
      {"credential_exposed", exposed_json(r)},
      {"state", state_json(r.state)},
      {"git", git_json(r.git)},
      {"limits", limits_json(plan, r)},
      {"mode", plan.rootless ? "rootless" : "rootful"},
      {"network", plan.network},
      {"isolation", isolation_record(plan)},
      {"egress", r.egress},
      {"tripwire", r.tripwire},
      {"seccomp", r.seccomp},
      {"disk", r.disk},
      {"warnings", printable_lines(r.warnings)},
      {"container_id", or_null(r.container_id)},
      {"container_removed", r.container_removed},
      {"container_removal", r.removal.empty() ? "launcher" : r.removal},
      {"path", r.path},
      {"path_reason", r.path_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.path_reason)},
      {"started_unix", r.started_unix},
      {"durations_ms", durations_json(r)},
  };
}

json early_failure_record(const std::string& id, const Error& error) {
  return {{"id", or_null(id)},          {"outcome", "launcher_error"}, {"exit_code", error.exit_code()},
          {"agent_exit_code", nullptr}, {"error_kind", name_of(error.kind())}, {"message", printable(error.what())},
          {"failed", "launcher"},       {"cause", nullptr}};
}

// Never through a symlink or into a planted hardlink: a new file under an unpredictable
// name beside it, renamed over whatever is there (launcher/lifecycle/safe_files.h).
bool write_status_file(const std::string& path, const json& record) {
  ReplacingFile file(path, 0644);
  bool ok = file.fd() >= 0 && write_all(file.fd(), as_text(record, 2) + "\n") && ::fsync(file.fd()) == 0;
  std::string why = file.fd() < 0 ? file.why() : ok ? "" : std::string("cannot write it: ") + std::strerror(errno);
  if (ok && !file.put_in_place()) ok = false, why = file.why();
  if (!ok) say("agent-sandbox: warning: cannot write status file " + path + ": " + why);
  return ok;
}

namespace {

constexpr off_t kOnceTail = 256 * 1024;  // gcs that race over one orphan write within moments

// Whether the ledger's tail (the file FD appends to, opened again for reading) holds TEXT.
bool tail_holds(int fd, const std::string& text) {
  UniqueFd in(::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st{};
  if (!in || ::fstat(in.get(), &st) != 0) return false;
  off_t from = st.st_size > kOnceTail ? st.st_size - kOnceTail : 0;
  std::string tail(static_cast<std::size_t>(st.st_size - from), '\0');
  ssize_t n = ::pread(in.get(), tail.data(), tail.size(), from);
  return n > 0 && tail.substr(0, static_cast<std::size_t>(n)).find(text) != std::string::npos;
}

}  // namespace

bool append_ledger(const std::string& path, const json& line, const std::string& once) {
  std::string why;
  int fd = open_append_owned(path, true, why);
  bool ok = fd >= 0 && ::flock(fd, LOCK_EX) == 0;
  if (ok && !once.empty() && tail_holds(fd, once)) return ::close(fd), true;  // another gc wrote it
  ok = ok && write_all(fd, as_text(line, -1) + "\n");
  if (!ok && why.empty()) why = std::strerror(errno);
  if (!ok) say("agent-sandbox: warning: cannot append to ledger " + path + ": " + why);
  if (fd >= 0) ::close(fd);
  return ok;
}

}  // namespace asbx
