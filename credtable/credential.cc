#include "credtable/credential.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "credtable/env_policy.h"
#include "credtable/inner_sandbox.h"
#include "launcher/error.h"
#include "launcher/util.h"
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

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

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
  std::string file = basename_of(row.destination);
  return {StagedCredential{row.name, real, std::string(kSecretsDir) + "/" + row.name + "/" + file,
                           std::string(kContainerHome) + "/" + row.destination}};
}

std::string staged_host_path(const std::string& session_dir, const StagedCredential& cred) {
  return session_dir + "/secrets/" + cred.runtime + "/" + basename_of(cred.staged_at);
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
  for (const auto& cred : plan.credentials)
    plan.mounts.push_back({"bind", staged_host_path(plan.session_dir, cred), cred.staged_at,
                           {"rbind", "ro", "nosuid", "nodev", "noexec"}});
  if (!plan.credentials.empty())
    plan.mounts.push_back({"bind", plan.session_dir + "/report", kReportDir, {"rbind", "rw", "nosuid", "nodev", "noexec"}});
}

std::vector<std::string> container_command(const LaunchPlan& plan) {
  if (plan.credentials.empty()) return plan.argv;
  std::vector<std::string> cmd = {"/bin/bash", "-c", stage_script(), "asbx-stage"};
  for (const auto& c : plan.credentials) cmd.insert(cmd.end(), {c.runtime, c.staged_at, c.copy_to});
  cmd.push_back("--");
  cmd.insert(cmd.end(), plan.argv.begin(), plan.argv.end());
  return cmd;
}

}  // namespace asbx
