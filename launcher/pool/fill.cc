#include "launcher/pool/fill.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <set>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/beneath.h"
#include "base/fdio.h"
#include "base/request.h"
#include "base/util.h"
#include "launcher/lifecycle/local.h"
#include "launcher/lifecycle/range_claim.h"
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/seccomp_file.h"
#include "launcher/lifecycle/seccomp_listener.h"
#include "launcher/lifecycle/start_checks.h"
#include "launcher/podman/gc.h"
#include "launcher/podman/liveness.h"
#include "launcher/podman/podman_api.h"
#include "plan/isolation.h"
#include "plan/userns.h"
#include "launcher/podman/podman_socket.h"
#include "launcher/pool/member.h"
#include "launcher/pool/pool.h"
#include "launcher/pool/ready.h"
#include "plan/build_plan.h"
#include "plan/config.h"
#include "plan/warm_fit.h"

namespace asbx {
namespace {

// The plan a member is made for: the seat's, no workspace, with a terminal or without, in a range of
// its own when the seat has ranges.
LaunchPlan member_plan(const SeatConfig& seat, std::optional<RangeClaim>& range, bool tty) {
  Request req;
  req.id = kMemberIdPrefix + random_hex(8);
  req.argv = {"/bin/sh"};
  req.tty = tty;
  SessionFacts facts = current_session_facts();
  LaunchPlan plan = build_plan(req, seat, current_user_facts(), facts);
  WarmFit fit = warm_fit(plan, seat.pool_size, seat.pool_tty_size);
  if (!fit.warm) throw Error(ErrorKind::config, std::string(tty ? "pool_tty_size" : "pool_size") + " in " + seat.path + ": " + fit.why);
  if (plan.isolation.user_namespace != "range") return plan;
  facts.userns_slot = range.emplace().slot();
  return build_plan(req, seat, current_user_facts(), facts);
}

// Each tree root's small shared tmpfs (launcher/pool/member.h): what the claim mounts beneath it
// appears in the member, nothing the member mounts comes back.
void mount_tree_roots(const LaunchPlan& plan) {
  // SESSION_DIR/tmpfs exists on a range seat (HOME's seat tmpfs is there); not on a "host" one.
  std::string tmpfs_dir = plan.session_dir + "/tmpfs";
  if (::mkdir(tmpfs_dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw Error(ErrorKind::create_failed, "warm pool: the member's dir " + tmpfs_dir + ": " + std::strerror(errno));
  HostIds agent = agent_host_ids(plan);  // the stub opens its fifo as the agent's user
  std::string go = member_go_fifo(plan.session_dir);
  if (::mkdir(member_claim_dir(plan.session_dir).c_str(), 0755) != 0 || ::mkfifo(go.c_str(), 0600) != 0 ||
      ::chown(go.c_str(), agent.uid, agent.gid) != 0)
    throw Error(ErrorKind::create_failed, "warm pool: the member's claim dir: " + std::string(std::strerror(errno)));
  for (const auto& root : member_tree_roots(plan, plan.session_dir)) {
    const std::string& dir = root.seat_dir;
    if (::mkdir(dir.c_str(), 0755) != 0 ||
        ::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,nr_inodes=64,mode=0755") != 0 ||
        ::mount(nullptr, dir.c_str(), nullptr, MS_SHARED, nullptr) != 0)
      throw Error(ErrorKind::create_failed, "warm pool: the member's mount for " + root.inside + " at " + dir + ": " +
                                                std::strerror(errno));
  }
}

// podman reads the profile at create; it goes right after (the keeper never returns to drop it).
Created create_member(PodmanApi& api, const LaunchPlan& plan, const nlohmann::json& body) {
  SeccompProfileForCreate profile(plan.seccomp);
  return api.create(body);
}

// The member's ready file: a claim finds it there (launcher/pool/ready.h).
void announce(const LaunchPlan& plan, Member m, const std::string& id, int listener_fd, std::int64_t slot) {
  m.id = id;
  m.boot_id = current_host_facts().boot_id;
  m.keeper_pid = static_cast<long>(::getpid());
  m.started_unix = plan_started_unix(plan);
  m.listener_fd = listener_fd;
  m.slot = slot;
  std::string why = write_ready(plan.session_dir, m);
  if (!why.empty()) throw Error(ErrorKind::create_failed, "warm pool: " + why);
}

// A ready file whose container podman no longer has (removed behind the pool's back): its keeper
// and its dir go, so nothing of it stays (the claim already passes it over: its init is gone).
std::string forget_member(const std::string& runtime_dir, const Member& m) {
  if (launcher_alive(m.keeper_pid, m.started_unix)) ::kill(static_cast<pid_t>(m.keeper_pid), SIGKILL);
  drop_member_session(runtime_dir, m.session);
  return "forgot member " + m.id.substr(0, 12) + ": podman no longer has its container";
}

// Everything but the fds the member needs goes; the keeper then waits to be claimed (SIGKILL).
[[noreturn]] void keep(std::initializer_list<int> held) {
  for (int fd = 0; fd < 1024; ++fd) {
    bool keep_it = false;
    for (int h : held) keep_it = keep_it || h == fd;
    if (!keep_it) ::close(fd);
  }
  int null = ::open("/dev/null", O_RDWR);
  while (null >= 0 && null < 3) null = ::dup(null);
  (void)!::chdir("/");
  for (;;) ::pause();
}

// In the forked keeper: make the member, report "ok ID" or "err CODE MESSAGE" on REPORT, keep it.
// It is created from IMAGE, the id its kind's digest was made with: a tag moved meanwhile cannot
// give it another image than the one its ready file names.
[[noreturn]] void make_member(const SeatConfig& seat, int report, bool tty, const std::string& image) {
  std::optional<RangeClaim> range;
  std::optional<LaunchPlan> plan;
  std::string id;
  try {
    plan = member_plan(seat, range, tty);
    PodmanApi api(plan->socket);
    SeatTmpfs home;
    home.mount(*plan);
    SeccompListener listener;
    listener.bind(*plan);
    mount_tree_roots(*plan);
    nlohmann::json body = member_body(*plan);
    Member ready;
    ready.image = image;
    ready.digest = member_digest(*plan, ready.image);
    body["image"] = image;
    body["labels"][kPoolLabel] = ready.digest;
    ready.resources = body["resource_limits"].dump();
    body["labels"][kPoolListenerLabel] = std::to_string(listener.fd());
    body["labels"][kPoolRuntimeLabel] = seat.runtime_dir;
    body["labels"][kPoolSlotLabel] = std::to_string(range ? range->slot() : -1);
    Created c = create_member(api, *plan, body);
    id = c.id;
    SessionResult limits;
    limits.warnings = c.warnings;
    check_limits_enforced(limits, *plan);
    api.init(id);
    api.start(id);  // its stub waits on the fifo: a claim skips podman's start (member.h)
    nlohmann::json state = api.inspect(id);
    ready.init_pid = state.is_object() && state.contains("State") ? state["State"].value("Pid", 0L) : 0L;
    ready.init_started = process_start_unix(ready.init_pid);
    if (ready.init_pid <= 0 || ready.init_started < 0) throw Error(ErrorKind::start_failed, "warm pool: the member's init process was not found");
    announce(*plan, std::move(ready), id, listener.fd(), range ? range->slot() : -1);
    write_all(report, "ok " + id + "\n");
    keep({listener.fd(), range ? range->fd() : -1});
  } catch (const std::exception& e) {  // any failure (a JSON one too) takes what was made with it
    try {
      if (!id.empty()) PodmanApi(plan->socket).remove(id);
    } catch (const std::exception&) {  // its keeper is gone with this process: gc takes it
    }
    if (plan) drop_member_session(seat.runtime_dir, plan->session_id);  // its tmpfs mounts, then the whole dir
    const Error* err = dynamic_cast<const Error*>(&e);
    write_all(report, err ? "err " + std::to_string(err->exit_code()) + " " + std::to_string(static_cast<int>(err->kind())) + " " + e.what() + "\n"
                          : std::string("err 1 -1 ") + e.what() + "\n");
  }
  ::_exit(1);
}

std::string make_one(const SeatConfig& seat, bool tty, const std::string& image) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw Error(ErrorKind::internal, std::string("warm pool: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw Error(ErrorKind::internal, std::string("warm pool: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(p[0]);
    ::setsid();
    ::signal(SIGHUP, SIG_IGN);
    make_member(seat, p[1], tty, image);
  }
  ::close(p[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(p[0]);
  if (text.rfind("ok ", 0) == 0) return text.substr(3, text.find('\n') - 3);
  int code = 0, kind = 0, used = 0;
  if (std::sscanf(text.c_str(), "err %d %d %n", &code, &kind, &used) >= 2 && kind >= 0)
    throw Error(static_cast<ErrorKind>(kind), text.substr(static_cast<std::size_t>(used), text.size() - used - 1));
  throw Error(ErrorKind::internal, "warm pool: the member's maker ended without a word" + (text.empty() ? "" : ": " + text));
}

}  // namespace

std::vector<PoolKind> pool_kinds(const SeatConfig& seat, PodmanApi& api) {
  std::vector<PoolKind> out;
  std::string image;
  for (bool tty : {false, true}) {
    int want = tty ? seat.pool_tty_size : seat.pool_size;
    if (want <= 0) continue;
    if (image.empty()) image = image_id(api, seat.image);
    std::optional<RangeClaim> none;
    out.push_back({tty, want, member_digest(member_plan(seat, none, tty), image), image});
  }
  return out;
}

int pool_fill(const SeatConfig& first, std::vector<std::string>& lines) {
  // A refill spawned before its seat was taken down (the config file removed with the seat's dirs)
  // makes nothing, and no runtime dir again either.
  struct stat st{};
  if (!first.path.empty() && ::stat(first.path.c_str(), &st) != 0 && errno == ENOENT) {
    lines.push_back("the seat config " + first.path + " is gone: nothing to fill");
    return 0;
  }
  // One fill at a time (a concurrent one would count the same ready members and make as many again).
  std::string lock_path = pool_dir(first.runtime_dir) + "/.fill.lock";
  UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    lines.push_back("another fill is at work");
    return 0;
  }
  // The seat config as it is now that this fill holds the lock: a refill spawned before the owner
  // turned the pool off (and a fill that drained it since) must not make members again.
  SeatConfig seat = first.path.empty() ? first : load_seat_config(first.path, current_user_facts());
  if (seat.runtime_dir != first.runtime_dir) return 0;  // another seat's pool now: its own fill
  PodmanApi api(seat.socket);
  std::vector<PoolKind> kinds = pool_kinds(seat, api);  // none when the pool is off: no member fits
  if (kinds.empty())
    lines.push_back("the seat's pool is off (pool_size = 0 in " + (seat.path.empty() ? std::string("the seat config") : seat.path) + ")");
  std::set<std::string> announced, listed;  // what a claim finds (launcher/pool/ready.h); what podman has
  for (const auto& m : ready_members(seat.runtime_dir)) announced.insert(m.id);
  std::vector<Member> members = list_members(api, seat.runtime_dir);
  for (const auto& m : members) listed.insert(m.id);
  for (const auto& m : ready_members(seat.runtime_dir))
    if (!m.claimed && !listed.count(m.id)) lines.push_back(forget_member(seat.runtime_dir, m));
  std::vector<int> ready(kinds.size(), 0);
  for (const auto& m : members) {
    std::size_t k = 0;
    while (k < kinds.size() && kinds[k].digest != m.digest) ++k;
    if (m.ready && k < kinds.size() && announced.count(m.id)) ++ready[k];
    else if (!m.claimed && k == kinds.size())
      lines.push_back(discard_member(api, seat.runtime_dir, m, kinds.empty() ? "the pool is off" : "it was made for another plan"));
    else if (!m.claimed && m.ready)
      lines.push_back(discard_member(api, seat.runtime_dir, m, "it has no ready file (an older launcher made it)"));
    else if (!m.claimed && (m.state == "exited" || m.state == "stopped"))  // its keeper may live on, holding a range
      lines.push_back(discard_member(api, seat.runtime_dir, m, "its stub has ended (podman says " + m.state + ")"));
  }
  int made = 0;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    for (; ready[k] < kinds[k].want; ++ready[k], ++made)
      lines.push_back("made member " + make_one(seat, kinds[k].tty, kinds[k].image).substr(0, 12) + (kinds[k].tty ? " (with a terminal)" : ""));
  return made;
}

int pool_fill_main(const std::string& program) {
  // What the fill makes is the seat's, its modes stated in the code: the caller's umask (a session's
  // refill inherits it; 077 made the claim dir the stub cannot enter) has no say (docs/THREATS.md).
  ::umask(022);
  try {
    SeatConfig seat = current_seat_config();
    ensure_podman_socket(seat.socket, current_user_facts());
    std::vector<std::string> lines;
    // The gc a warm session's launch left out (launcher/lifecycle/local.cc), before members are counted.
    gc_before_launch(seat.socket, seat.runtime_dir, seat.ledger, runsc_socket(seat));
    pool_fill(seat, lines);
    for (const auto& l : lines) std::fprintf(stderr, "%s: pool: %s\n", program.c_str(), l.c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: pool: %s\n", program.c_str(), e.what());
    return e.exit_code();
  }
}

}  // namespace asbx
