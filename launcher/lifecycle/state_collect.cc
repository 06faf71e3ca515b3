#include "launcher/lifecycle/state_collect.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/podman/container_root.h"
#include "launcher/lifecycle/home.h"
#include "base/beneath.h"
#include "launcher/state/collect.h"

namespace asbx {
namespace {

constexpr std::int64_t kMaxCredentialBytes = 1 << 20;

// The credential copy as the CLI left it (a refresh rewrites it): a regular file, read
// without following anything, at most 1 MiB.
std::optional<CredentialPrint> current_print(int home_fd, const std::string& relative) {
  UniqueFd fd(open_beneath(home_fd, relative, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxCredentialBytes) return std::nullopt;
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  if (::pread(fd.get(), data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) return std::nullopt;
  CredentialPrint print{st.st_size, content_digest(data)};
  std::fill(data.begin(), data.end(), '\0');
  return print;
}

}  // namespace

StateReport collect_session_state(const LaunchPlan& plan, int home_fd, const std::vector<CredentialPrint>& staged) {
  std::vector<CredentialPrint> prints = staged;
  for (const auto& cred : plan.credentials)
    if (auto now = current_print(home_fd, relative_to_home(cred.copy_to))) prints.push_back(*now);
  return collect_state(home_fd, plan.session_id, plan.state, prints);
}

}  // namespace asbx
