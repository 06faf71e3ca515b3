#include "launcher/pool/take.h"

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <memory>
#include <thread>
#include <map>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/session_owner.h"
#include "launcher/lifecycle/session_dir.h"
#include <sys/stat.h>
#include "launcher/podman/gc.h"
#include "launcher/podman/liveness.h"
#include "launcher/podman/pool_claim.h"
#include "launcher/pool/member.h"
#include "launcher/pool/pool.h"
#include "launcher/pool/pool_gc.h"
#include "launcher/pool/ready.h"

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



// The session's own dir with its owner, as the cold path's listener takes it: an id a live launcher
// holds is refused before any member is touched.
std::string hold_session_dir(const LaunchPlan& plan) {
  std::string why, parent = plan.session_dir.substr(0, plan.session_dir.rfind('/'));
  if (!make_dirs(parent, &why)) throw Error(ErrorKind::internal, "warm pool: " + parent + ": " + why);
  std::string owner = plan.session_dir + "/owner";
  {
    SessionDirLock lock;  // held until the owner is written: gc reads it under the lock (session_dir.h)
    if (!take_session_dir(plan, lock))
      throw Error(ErrorKind::internal, "warm pool: cannot take " + plan.session_dir + ": " + std::strerror(errno));
    if (write_session_owner(owner, plan)) return plan.session_dir;
  }
  int err = errno;
  leave_session_dir(plan.session_dir, owner);  // one written in part goes, and the dir when nothing else holds it
  throw Error(ErrorKind::internal, "warm pool: cannot write " + owner + ": " + std::strerror(err));
}

void drop_claimed(const LaunchPlan& plan, const std::string& runtime_dir, Member m, const std::string& why) {
  PodmanApi api(plan.socket);
  m.claimed = true;
  discard_member(api, runtime_dir, m, why);
}

// The members are read from their ready files (launcher/pool/ready.h) while podman's answer to the
// seat image's id is on its way (ask_image_id); the winner's image is checked against it before it is
// handed out (its state is the session's inspect, after the plan is made again on its range: session.cc).
std::optional<WarmMember> take_one(const LaunchPlan& plan, const std::string& runtime_dir, const ImageQuestion& asked,
                                   std::string& why_cold) {
  bool fits = asked.id.valid() && asked.socket == plan.socket && asked.image == plan.image;
  std::shared_future<std::string> image = fits ? asked.id : ask_image_id(plan.socket, plan.image).id;
  int dir = ::open(pool_dir(runtime_dir).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) throw Error(ErrorKind::internal, "warm pool: cannot open " + pool_dir(runtime_dir) + ": " + std::strerror(errno));
  UniqueFd dir_fd(dir);
  std::vector<Member> members = ready_members(runtime_dir);
  std::map<std::string, std::string> digests;  // a member's image id -> this plan's digest on it
  int other = 0;
  for (const auto& m : members) {
    if (!m.ready) continue;
    std::string& digest = digests[m.image];
    if (digest.empty()) digest = member_digest(plan, m.image);
    if (m.digest != digest) {
      ++other;
      continue;
    }
    if (!claim_member(dir, m.id, PoolClaim{static_cast<long>(::getpid()), plan_started_unix(plan), plan.timeout_ms, plan.session_id})) continue;
    WarmMember w{m.id, m.session, runtime_dir + "/" + m.session, runtime_dir, m.slot, UniqueFd(), "", 0, m.resources,
                 std::async(std::launch::async, [socket = plan.socket, id = m.id] { return PodmanApi(socket).inspect(id); }).share()};
    std::string why;
    w.listener = take_listener(m, w.session_dir + "/seccomp.sock", why);
    if (!w.listener) {
      drop_claimed(plan, runtime_dir, m, "claimed, but " + why);
      continue;
    }
    std::string seat_image;
    try {
      seat_image = image.get();
    } catch (const Error& e) {
      drop_claimed(plan, runtime_dir, m, "claimed, but the seat's image could not be checked");
      why_cold = std::string("the seat's image could not be checked: ") + e.what();
      return std::nullopt;
    }
    if (seat_image == m.image) return w;
    drop_claimed(plan, runtime_dir, m, "claimed, but it was made from another image than the seat's now");
    for (const auto& n : members) other += n.ready && n.image != seat_image ? 1 : 0;
    break;
  }
  why_cold = std::string(kNoReadyMember) + (other > 0 ? " was made for this session's plan (" + std::to_string(other) + " for another)" : "");
  return std::nullopt;
}

}  // namespace

// On a thread never joined: a launcher that fails before its claim (a usage error in the plan) or
// goes cold does not wait for podman's answer, even from a service that never gives one.
ImageQuestion ask_image_id(const std::string& socket, const std::string& image) {
  auto answer = std::make_shared<std::promise<std::string>>();
  ImageQuestion q{socket, image, answer->get_future().share()};
  std::thread([answer, socket, image] {
    try {
      PodmanApi api(socket);
      answer->set_value(image_id(api, image));
    } catch (...) {
      answer->set_exception(std::current_exception());
    }
  }).detach();
  return q;
}

void release_session_dir(const std::string& own_dir) {
  if (own_dir.empty()) return;
  leave_session_dir(own_dir, own_dir + "/owner");
}

std::optional<WarmMember> take_member(const LaunchPlan& plan, const std::string& runtime_dir, const ImageQuestion& asked,
                                      std::string& why_cold) {
  std::int64_t t0 = steady_ms();
  HostFacts host = current_host_facts();  // read before the take clears a dead owner's files
  bool orphan = dead_owner_under(runtime_dir, host.boot_id, host.launcher_alive) ||
                dead_claim_under(runtime_dir, host.launcher_alive);
  std::string own;
  try {
    own = hold_session_dir(plan);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::create_failed) throw;  // a live launcher holds the id: refused, as cold
    why_cold = e.what();  // the cold path meets it too, and says so with its own code
    return std::nullopt;
  }
  std::optional<WarmMember> w = take_one(plan, runtime_dir, asked, why_cold);
  if (!w) release_session_dir(own);
  else w->own_dir = own;
  if (w) w->claim_ms = steady_ms() - t0, w->orphan_in_sight = orphan;
  return w;
}

}  // namespace asbx
