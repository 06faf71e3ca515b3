#include "launcher/pool/take.h"

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/podman/liveness.h"
#include "launcher/podman/pool_claim.h"
#include "launcher/pool/member.h"
#include "launcher/pool/pool.h"

namespace asbx {
namespace {

std::string socket_path(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || addr.sun_family != AF_UNIX) return "";
  return std::string(addr.sun_path, ::strnlen(addr.sun_path, sizeof addr.sun_path));
}

// The keeper's listener, when the keeper is still the process the labels name; the keeper is killed.
UniqueFd take_listener(const Member& m, const std::string& want, std::string& why) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(m.keeper_pid), 0)));
  if (!pidfd || !launcher_alive(m.keeper_pid, m.started_unix)) {
    why = "its keeper (pid " + std::to_string(m.keeper_pid) + ") is gone";
    return UniqueFd();
  }
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), m.listener_fd, 0)));
  ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
  if (!fd) why = std::string("pidfd_getfd: ") + std::strerror(errno);
  else if (socket_path(fd.get()) != want) why = "its keeper's fd " + std::to_string(m.listener_fd) + " is not " + want;
  else return fd;
  return UniqueFd();
}

std::int64_t plan_started_unix(const LaunchPlan& plan) {
  auto it = plan.labels.find("agent-sandbox.started");
  try {
    return it == plan.labels.end() ? 0 : std::stoll(it->second);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::optional<WarmMember> take_member(const LaunchPlan& plan, const std::string& runtime_dir, std::string& why_cold) {
  std::string digest = member_digest(plan);
  std::vector<Member> members;
  try {
    PodmanApi api(plan.socket);
    members = list_members(api, runtime_dir);
  } catch (const Error& e) {
    why_cold = std::string("the pool could not be listed: ") + e.what();
    return std::nullopt;
  }
  int dir = ::open(pool_dir(runtime_dir).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) throw Error(ErrorKind::internal, "warm pool: cannot open " + pool_dir(runtime_dir) + ": " + std::strerror(errno));
  UniqueFd dir_fd(dir);
  int other = 0;
  for (const auto& m : members) {
    if (!m.ready) continue;
    if (m.digest != digest) {
      ++other;
      continue;
    }
    if (!claim_member(dir, m.id, PoolClaim{static_cast<long>(::getpid()), plan_started_unix(plan), plan.session_id})) continue;
    WarmMember w{m.id, m.session, runtime_dir + "/" + m.session, runtime_dir, m.slot, UniqueFd()};
    std::string why;
    w.listener = take_listener(m, w.session_dir + "/seccomp.sock", why);
    if (w.listener) return w;
    PodmanApi api(plan.socket);
    Member claimed = m;
    claimed.claimed = true;
    discard_member(api, runtime_dir, claimed, "claimed, but " + why);
  }
  why_cold = std::string(kNoReadyMember) + (other > 0 ? " was made for this session's plan (" + std::to_string(other) + " for another)" : "");
  return std::nullopt;
}

}  // namespace asbx
