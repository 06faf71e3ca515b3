#include "launcher/lifecycle/home.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "credtable/credential.h"
#include "credtable/lifetime.h"
#include "base/error.h"
#include "base/util.h"
#include "plan/userns.h"

namespace asbx {
namespace {

[[noreturn]] void unstaged(const StagedCredential& cred, const std::string& why) {
  throw Error(ErrorKind::credential_unresolved, "credential for runtime '" + cred.runtime +
                                                    "' could not be copied into the container's HOME (" + why +
                                                    "): '" + cred.copy_to + "'");
}

// Preflight said the credential would last the session, yet the CLI refreshed it.
std::string unexpected_refresh(const StagedCredential& cred, std::int64_t started) {
  const CredentialLifetime& l = cred.lifetime;
  std::string left = l.refresh_at_unix ? "its refresh was due only in " + format_duration_s(*l.refresh_at_unix - started)
                                       : "its auth kind (" + l.auth_kind + ") has no known expiry";
  return "the " + cred.runtime + " credential's refresh inside was NOT expected: " + left +
         " at the start; the CLI refreshed it anyway (its refresh rule differs from the credential table's)";
}

}  // namespace

std::string relative_to_home(const std::string& container_path) {
  std::string home = std::string(kContainerHome) + "/";
  if (container_path.size() <= home.size() || container_path.compare(0, home.size(), home) != 0) return "";
  return container_path.substr(home.size());
}

// Inject mode: the file the agent gets holds placeholders; the pairs stay in this object.
std::string SessionHome::placeholder_copy(const StagedCredential& cred) {
  std::string real = read_credential(cred);
  PlaceholderFile file = make_placeholder_file(cred.secrets, real, random_bytes);
  std::fill(real.begin(), real.end(), '\0');
  if (!file.recognised) unstaged(cred, "its shape changed since the plan: " + file.why);
  swaps_.insert(swaps_.end(), file.swaps.begin(), file.swaps.end());
  return file.text;
}

void SessionHome::stage(const ContainerRoot& root, const LaunchPlan& plan) {
  home_ = UniqueFd(open_under(root.fd(), kContainerHome, O_PATH | O_DIRECTORY, true, true));
  if (!home_)
    throw Error(ErrorKind::internal, std::string("cannot open the container's HOME ") + kContainerHome + ": " +
                                         std::strerror(errno));
  auto [uid, gid] = agent_host_ids(plan);  // the seat kernel's ids (plan/userns.h)
  for (const auto& cred : plan.credentials) {
    std::string rel = relative_to_home(cred.copy_to);
    if (rel.empty()) unstaged(cred, "not under HOME");
    std::string data = cred.mode == "inject" ? placeholder_copy(cred) : read_credential(cred);
    digests_.push_back(content_digest(data));
    prints_.push_back({static_cast<std::int64_t>(data.size()), digests_.back()});
    // Rootless: keep-id maps the launcher's own uid onto the container user already.
    std::string why = write_new_file(home_.get(), rel, data, 0600, !plan.rootless, uid, gid);
    std::fill(data.begin(), data.end(), '\0');
    if (!why.empty()) unstaged(cred, why);
  }
  for (const auto& [rel, text] : plan.home_seed) {  // the row's constant files (credtable.h)
    std::string why = write_new_file(home_.get(), rel, text, 0600, !plan.rootless, uid, gid);
    if (!why.empty())
      throw Error(ErrorKind::internal, "cannot write the runtime's seed file '" + rel + "' into the container's HOME: " + why);
  }
}

void SessionHome::check_refresh(const LaunchPlan& plan, SessionResult& result) const {
  if (!home_) return;
  result.credentials_refreshed.assign(plan.credentials.size(), false);
  for (std::size_t i = 0; i < plan.credentials.size() && i < digests_.size(); ++i) {
    const auto& cred = plan.credentials[i];
    auto now = digest_file_under(home_.get(), relative_to_home(cred.copy_to), kMaxCredentialBytes);
    if (!now || *now == digests_[i]) continue;
    result.credential_refreshed_in_container = true;
    result.credentials_refreshed[i] = true;
    if (cred.mode == "inject") continue;  // it rewrote placeholders the wall handed it: the host's login is untouched
    result.warnings.push_back("the " + cred.runtime + " credential was refreshed inside the container; the host file is "
                              "unchanged, but a single-use refresh token rotated inside can invalidate the host's "
                              "login (log in again on the seat if it stops working)");
    if (!cred.lifetime.refresh_due) result.warnings.push_back(unexpected_refresh(cred, result.started_unix));
  }
}

}  // namespace asbx
