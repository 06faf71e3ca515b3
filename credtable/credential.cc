#include "credtable/credential.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "credtable/env_policy.h"
#include "credtable/inner_sandbox.h"
#include "credtable/lifetime.h"
#include "credtable/placeholder.h"
#include "egress/policy.h"
#include "base/error.h"
#include "base/util.h"
#include "mounts/workspace.h"

namespace asbx {
namespace {

void validate_account(const std::string& account) {
  if (!is_plain_name(account, 64))
    throw Error(ErrorKind::usage, "--account: '" + account +
                                      "' must be 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit");
}

[[noreturn]] void unresolved(const CredRow& row, const std::string& path, const std::string& why) {
  throw Error(ErrorKind::credential_unresolved, "credential for runtime '" + row.name + "' " + why + ": '" + path + "'");
}

// A readable regular file, symlinks followed; returns its resolved path.
std::string check_readable(const CredRow& row, const std::string& path) {
  std::string real = resolve_path(path);
  if (real.empty()) unresolved(row, path, std::string("does not resolve (") + std::strerror(errno) + ")");
  struct stat st{};
  if (::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) unresolved(row, path, "is not a regular file");
  int fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) unresolved(row, path, std::string("cannot be read (") + std::strerror(errno) + ")");
  ::close(fd);
  return real;
}

LifetimePolicy lifetime_policy(const SeatConfig& seat, const SessionFacts& facts, std::int64_t timeout_ms) {
  LifetimePolicy p;
  p.now_unix = facts.now_unix;
  p.session_s = (timeout_ms > 0 ? timeout_ms : seat.credential_horizon_ms) / 1000;
  p.session_source = timeout_ms > 0 ? "--timeout " + format_duration_s(p.session_s)
                                    : "no --timeout: the seat's credential_horizon " + format_duration_s(p.session_s);
  p.margin_s = seat.credential_margin_ms / 1000;
  p.refuse = !seat.credential_expiring_warn;
  return p;
}

// Does one of the session's --egress values reach an inject host of the row (port 443)?
bool reaches_inject_host(const CredRow& row, const std::vector<std::string>& asked) {
  for (const auto& spec : asked) {
    std::vector<EgressRule> rules;
    try {
      if (spec == "default")
        for (const auto& r : row.egress) rules.push_back(parse_egress_rule(r, "runtime egress", true));
      else
        rules.push_back(parse_egress_rule(spec, "--egress", false));
    } catch (const Error&) {
      continue;  // plan_session_egress names the bad value
    }
    for (const auto& r : rules)
      for (const auto& h : row.inject_hosts)
        if (r.matches(h, 443, false)) return true;
  }
  return false;
}

}  // namespace

void plan_lifetimes(const CredRow& row, const std::string& account, const SeatConfig& seat, const SessionFacts& facts,
                    LaunchPlan& plan, bool inject_wanted) {
  LifetimePolicy policy = lifetime_policy(seat, facts, plan.timeout_ms);
  for (auto& cred : plan.credentials) {
    std::string bytes = read_credential(cred);
    cred.lifetime = read_lifetime(row.lifetime, bytes);
    // Inject when the row can and the file has the shape the row names (the placeholders made
    // here are thrown away: only the verdict counts; the real ones are made at staging).
    auto no_random = [](std::size_t n) { return std::string(n, '\x5a'); };
    if (inject_wanted && row.can_inject() && make_placeholder_file(row.secrets, bytes, no_random).recognised) {
      cred.mode = "inject";
      cred.secrets = row.secrets;
    }
    policy.injected = cred.mode == "inject";
    std::fill(bytes.begin(), bytes.end(), '\0');
    if (cred.lifetime.account.empty()) cred.lifetime.account = account;
    std::string warning = check_lifetime(row.name, row.lifetime, cred.lifetime, policy);
    if (!warning.empty()) plan.credential_warnings.push_back(warning);
  }
}

std::vector<StagedCredential> resolve_credentials(const CredRow& row, const std::string& account,
                                                  const std::string& explicit_path, const UserFacts& user) {
  std::string path = row.source;
  bool chosen = !explicit_path.empty() || !account.empty();
  if (!explicit_path.empty()) {
    if (explicit_path[0] != '/') throw Error(ErrorKind::usage, "--credential: '" + explicit_path + "' must be an absolute path");
    path = explicit_path;
  } else if (!account.empty()) {
    validate_account(account);
    if (row.account_source.empty()) throw Error(ErrorKind::usage, "--account: runtime '" + row.name + "' has no accounts");
    path = row.account_source;
  }
  path = expand_template(path, user, account);
  struct stat st{};
  if (!chosen && !row.required && ::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return {};
  std::string real = check_readable(row, path);
  return {StagedCredential{row.name, real, std::string(kContainerHome) + "/" + row.destination}};
}

void plan_runtime(const Request& req, const SeatConfig& seat, const UserFacts& user, const SessionFacts& facts,
                  LaunchPlan& plan) {
  if (req.runtime.empty()) {
    if (!req.account.empty() || !req.credential.empty())
      throw Error(ErrorKind::usage, "--account and --credential need --runtime NAME");
    return;
  }
  CredTable table = load_credtable(credtable_path(seat));
  const CredRow& row = find_row(table, req.runtime);
  plan.runtime = row.name;
  plan.inner_sandbox = inner_sandbox_state(row, plan.argv);
  plan.env = container_env(facts.environ, row.env);
  plan.credentials = resolve_credentials(row, req.account, req.credential, user);
  // Inject mode whenever the session goes through the wall to one of the row's API hosts, unless
  // the seat config turns it off (a wall to other hosts only has nowhere to put the real token).
  bool wanted = seat.egress.inject && !req.pod_manifest && reaches_inject_host(row, req.egress);
  plan_lifetimes(row, req.account, seat, facts, plan, wanted);
  plan.state.paths = row.state;
  plan.home_seed = row.home_seed;
}

std::string read_credential(const StagedCredential& cred) {
  int fd = ::open(cred.source.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME | O_NONBLOCK);
  if (fd < 0 && errno == EPERM) fd = ::open(cred.source.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw Error(ErrorKind::credential_unresolved, "credential for runtime '" + cred.runtime + "' cannot be read (" +
                                                      std::strerror(errno) + "): '" + cred.source + "'");
  std::string data;
  char buf[8192];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && static_cast<std::int64_t>(data.size()) <= kMaxCredentialBytes;)
    data.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (static_cast<std::int64_t>(data.size()) > kMaxCredentialBytes)
    throw Error(ErrorKind::credential_unresolved, "credential for runtime '" + cred.runtime +
                                                      "' is larger than 1 MiB: '" + cred.source + "'");
  return data;
}

}  // namespace asbx
