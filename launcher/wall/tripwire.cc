#include "launcher/wall/tripwire.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/diagnostics.h"
#include "launcher/lifecycle/late_close.h"
#include "launcher/wall/tun.h"
#include "tripwire/answer.h"
#include "plan/userns.h"

namespace asbx {
namespace {

constexpr int kBatch = 64;  // packets per wake-up, so the decoys' events are never starved

std::int64_t now_unix_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::int64_t steady_now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

// 128 random bits as hex: what makes this session's decoys its own.
std::string random_mark() {
  unsigned char bytes[16] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    throw Error(ErrorKind::tripwire, std::string("tripwire: getrandom: ") + std::strerror(errno));
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += {hex[b >> 4], hex[b & 15]};
  return out;
}

}  // namespace

Tripwire::~Tripwire() { stop(); }

void Tripwire::arm(long pid, const LaunchPlan& plan, int home_fd, std::function<void(const std::string&)> on_trip) {
  const TripwirePlan& t = plan.tripwire;
  if (!t.armed()) return;
  mode_ = t.mode;
  on_trip_ = std::move(on_trip);
  try {
    mark_ = random_mark();
    if (t.network) {
      device_ = UniqueFd(open_tripwire_device(pid));
      packet_.resize(65536);  // the largest IP packet the device can hand over
    }
    auto [uid, gid] = agent_host_ids(plan);  // the seat kernel's ids (plan/userns.h)
    // rootless: keep-id maps us onto the agent already; gVisor: its gofer opens what is only stat'ed
    canaries_.arm(home_fd, t, mark_, !plan.rootless, uid, gid, plan.isolation.wall == "gvisor");
  } catch (const Error& e) {
    throw Error(ErrorKind::tripwire, std::string(e.what()) + "; nothing ran (the seat owner may turn the tripwire off: "
                                                             "tripwire = \"off\" in " + t.source + ")");
  }
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(ErrorKind::tripwire, std::string("tripwire: pipe: ") + std::strerror(errno));
  stop_read_ = UniqueFd(p[0]);
  stop_write_ = UniqueFd(p[1]);
  refilled_ms_ = steady_now_ms();
  thread_ = std::thread([this] { run(); });
}

void Tripwire::stop() {
  if (thread_.joinable()) {
    (void)!::write(stop_write_.get(), "x", 1);
    thread_.join();
  }
  // What was queued when the agent ended is counted; it no longer ends anything. Then the watches
  // go: everything after this (the state collection, the secret scan) is the launcher reading HOME,
  // and the agent, ended, opens nothing more. A second stop() finds nothing to drain.
  canaries_.drain([&](const std::string& path) { tripped(tally_.canary(path, now_unix_ms()), describe_canary(path), false); });
  canaries_.disarm();
  close_late(std::move(device_));  // its last close unregisters it: off the caller's time (late_close.h)
}

std::string Tripwire::killed_by() const { return killed_by_; }

nlohmann::json Tripwire::json(const LaunchPlan& plan) const {
  const TripwirePlan& t = plan.tripwire;
  if (!t.armed()) return nullptr;
  nlohmann::json out = {{"mode", tripwire_mode_name(t.mode)}, {"mark", mark_.empty() ? nlohmann::json(nullptr) : nlohmann::json(mark_)}};
  out.update(tally_.json(t.network, !t.canaries.empty()));
  return out;
}

void Tripwire::tripped(bool first_of_kind, const std::string& what, bool may_kill) {
  bool decoy = what.rfind("canary ", 0) == 0;
  if (first_of_kind)  // the bounded, non-blocking diagnostics path: a packet thread never waits on stderr
    say(std::string(program_invocation_short_name) + ": tripwire: " + what +
        (mode_ == TripwireMode::kill && may_kill ? " (tripwire = \"kill\": the session ends)"
         : !may_kill                             ? " (seen as the agent ended; on record, it ended nothing)"
         : decoy                                 ? " (a decoy; the record counts every open)"
                                     : " (refused; the record counts every attempt)"));
  if (mode_ != TripwireMode::kill || !may_kill || fired_.exchange(true)) return;
  killed_by_ = tally_.first();
  if (on_trip_) on_trip_(killed_by_);
}

void Tripwire::run() {
  for (;;) {
    std::int64_t now = steady_now_ms();
    tokens_ = std::min<double>(kPacketsPerSecond, tokens_ + (now - refilled_ms_) * (kPacketsPerSecond / 1000.0));
    refilled_ms_ = now;
    bool can_read = device_ && tokens_ >= 1;
    pollfd fds[3] = {{stop_read_.get(), POLLIN, 0}, {can_read ? device_.get() : -1, POLLIN, 0}, {canaries_.fd(), POLLIN, 0}};
    int timeout = device_ && !can_read ? 1 + static_cast<int>((1 - tokens_) * 1000.0 / kPacketsPerSecond) : -1;
    if (::poll(fds, 3, timeout) < 0 && errno != EINTR) return;
    if (fds[0].revents) return;
    if (fds[1].revents & POLLIN) packets();
    if (fds[2].revents & POLLIN)
      canaries_.drain([&](const std::string& path) { tripped(tally_.canary(path, now_unix_ms()), describe_canary(path), true); });
  }
}

void Tripwire::packets() {
  for (int i = 0; i < kBatch && tokens_ >= 1; ++i) {
    ssize_t n = ::read(device_.get(), packet_.data(), packet_.size());
    if (n <= 0) return;
    tokens_ -= 1;
    Answer a = answer_packet(std::string_view(packet_.data(), static_cast<std::size_t>(n)));
    if (!a.reply.empty()) (void)!::write(device_.get(), a.reply.data(), a.reply.size());
    if (a.attempt.kind != AttemptKind::none) tripped(tally_.attempt(a.attempt, now_unix_ms()), describe(a.attempt), true);
  }
}

}  // namespace asbx
