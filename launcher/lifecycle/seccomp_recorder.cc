#include "launcher/lifecycle/seccomp_recorder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/diagnostics.h"

// Linux 6.6: the caller woken on the answering CPU (a ping-pong per refused call, not two wake-ups).
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

namespace asbx {
namespace {

constexpr int kSentryLogWaitMs = 2000;
constexpr useconds_t kSentryLogBatchUs = 2000;

std::int64_t now_unix_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

// The kernel's sizes of the two structures (they may grow; the ioctls take the kernel's).
seccomp_notif_sizes notif_sizes() {
  seccomp_notif_sizes s{};
  if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &s) != 0)
    throw Error(ErrorKind::seccomp_unavailable, std::string("the seccomp recorder: SECCOMP_GET_NOTIF_SIZES: ") + std::strerror(errno));
  return s;
}

}  // namespace

void SeccompRecorder::adopt(UniqueFd notify_fd, bool kill, std::function<void()> on_first) {
  if (!notify_fd) return;
  notify_ = std::move(notify_fd);
  (void)::ioctl(notify_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);  // older kernels: EINVAL, slower only
  kill_ = kill;
  on_first_ = std::move(on_first);
  start_thread();
}

void SeccompRecorder::adopt_sentry_log(UniqueFd log_fd, bool kill, std::function<void()> on_first, const std::string& socket,
                                       const std::string& runtime) {
  if (!log_fd) return;
  log_ = std::move(log_fd);
  kill_ = kill;
  on_first_ = std::move(on_first);
  start_thread();
  for (int waited = 0; !heard_.load(); waited += 10) {  // the boot logs as it starts, before init returns
    if (waited >= kSentryLogWaitMs)
      throw Error(ErrorKind::seccomp_unavailable, "gVisor: the sentry did not open its log for the seccomp recorder: the podman "
                                                  "service at " + socket + " did not run the sandbox through " + runtime +
                                                  " (its containers.conf must name it); nothing was started");
    ::usleep(10 * 1000);
  }
}

void SeccompRecorder::start_thread() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(ErrorKind::seccomp_unavailable, std::string("the seccomp recorder: pipe: ") + std::strerror(errno));
  stop_read_ = UniqueFd(p[0]);
  stop_write_ = UniqueFd(p[1]);
  thread_ = std::thread([this] { run(); });
}

void SeccompRecorder::stop() {
  if (thread_.joinable()) {
    (void)!::write(stop_write_.get(), "x", 1);
    thread_.join();
  }
  notify_ = UniqueFd();  // from here the kernel answers ENOSYS (seccomp_unotify(2))
  log_ = UniqueFd();     // gVisor: the sentry's next log write fails (EPIPE); its refusals stand
}

void SeccompRecorder::run() {
  seccomp_notif_sizes sizes = log_ ? seccomp_notif_sizes{} : notif_sizes();
  std::string request(std::max<std::size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)), '\0');
  std::string response(std::max<std::size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp)), '\0');
  int source = log_ ? log_.get() : notify_.get();
  for (;;) {
    pollfd fds[2] = {{stop_read_.get(), POLLIN, 0}, {source, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) {
      while (log_ && read_log() > 0) {}  // what the sentry wrote before it ended (the fd never blocks)
      return;
    }
    if (log_ && fds[1].revents) {
      // The sentry writes an entry at a time: a short pause lets them gather (the FIFO holds 1 MiB),
      // so a busy log costs a read per batch, not two system calls per entry.
      ::usleep(kSentryLogBatchUs);
      int got;
      while ((got = read_log()) > 0) {}
      if (got == 0) return;  // the sandbox closed its log: it has ended
    } else if (fds[1].revents & POLLIN) {
      answer_one(request, response);
    } else if (fds[1].revents) {
      return;  // POLLHUP: no task of the container is left under the filter
    }
  }
}

// One read of the sentry's log (the fd never blocks): each refusal line counted.
int SeccompRecorder::read_log() {
  char buf[64 * 1024];
  ssize_t n = ::read(log_.get(), buf, sizeof buf);
  if (n == 0) return 0;
  if (n < 0) return errno == EINTR || errno == EAGAIN ? -1 : 0;
  sentry_.feed(std::string_view(buf, std::size_t(n)), [this](long nr) {
    RefusedCall call = match_sentry_refusal(nr);
    if (call.call >= 0) count(call);  // podman's default action and unrecorded rows: not counted, as under runc
  });
  if (sentry_.heard()) heard_.store(true);
  if (!boot_known_.load(std::memory_order_relaxed) && sentry_.boot().complete()) {
    boot_ = sentry_.boot();
    boot_known_.store(true, std::memory_order_release);
  }
  return 1;
}

SentryBoot SeccompRecorder::sentry_boot(int wait_ms) const {
  for (int waited = 0; !boot_known_.load(std::memory_order_acquire); waited += 10) {
    if (waited >= wait_ms) return {};
    ::usleep(10 * 1000);
  }
  return boot_;
}

void SeccompRecorder::count(const RefusedCall& call) {
  if (!tally_.count(call, now_unix_ms())) return;
  say(std::string(program_invocation_short_name) + ": seccomp: refused " + printable(tally_.first()) +
      (kill_ ? " (tripwire = \"kill\": the session ends)" : " (the record counts every refused call)"));
  if (kill_) {
    killed_by_ = "the refused call " + tally_.first();
    if (on_first_) on_first_();
  }
}

// One notification: matched, counted, answered with the row's errno. RECV after POLLIN never
// waits (a caller killed meanwhile makes it ENOENT); SEND to a caller killed meanwhile, ENOENT.
void SeccompRecorder::answer_one(std::string& request, std::string& response) {
  std::memset(request.data(), 0, request.size());
  if (::ioctl(notify_.get(), SECCOMP_IOCTL_NOTIF_RECV, request.data()) != 0) return;
  seccomp_notif n;
  std::memcpy(&n, request.data(), sizeof n);
  RefusedCall call = match_refused_call(n.data.arch, n.data.nr, reinterpret_cast<const std::uint64_t*>(n.data.args));
  count(call);
  // Kill mode, once tripped: no caller is answered. The SIGKILL to init reaches the rest of the
  // session a moment later; an answer now would let the caller run on meanwhile (print, retry).
  // A waiting caller ends with the session, or gets the kernel's ENOSYS when the fd closes.
  if (kill_ && !killed_by_.empty()) return;
  seccomp_notif_resp r{};
  r.id = n.id;
  r.error = -call.errno_value;
  std::memset(response.data(), 0, response.size());
  std::memcpy(response.data(), &r, sizeof r);
  (void)::ioctl(notify_.get(), SECCOMP_IOCTL_NOTIF_SEND, response.data());
}

nlohmann::json SeccompRecorder::json(const LaunchPlan& plan) const {
  if (plan.seccomp.path.empty()) return nullptr;
  if (plan.seccomp.listener.empty() && !plan.seccomp.sentry_log)
    return {{"recorded", false}, {"why", "the profile names no recorder"}};
  // gVisor: the sentry logs a refused call's number only: socket families and clone flags unknown,
  // and the refusals of calls whose rows decide by arguments counted apart (refusal_tally.h).
  nlohmann::json out = {{"recorded", true}, {"mode", tripwire_mode_name(plan.tripwire.mode)},
                        {"source", plan.seccomp.sentry_log ? "sentry_log" : "listener"}};
  out.update(tally_.json());
  if (plan.seccomp.sentry_log) out["unattributed"] = tally_.unattributed_json();
  return out;
}

}  // namespace asbx
