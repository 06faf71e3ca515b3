#include "launcher/pool/warm_bind.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"
#include "launcher/lifecycle/pump.h"
#include "launcher/pool/member.h"
#include "launcher/pool/pool.h"

namespace asbx {
namespace {

[[noreturn]] void refuse(const std::string& what, int err) {
  throw Error(ErrorKind::workspace_rejected, "warm pool: " + what + ": " + std::strerror(err) + "; nothing was started");
}

std::vector<std::string> member_env(const nlohmann::json& state) {
  std::vector<std::string> out;
  if (state.is_object() && state.contains("Config") && state["Config"].contains("Env") && state["Config"]["Env"].is_array())
    for (const auto& kv : state["Config"]["Env"])
      if (kv.is_string()) out.push_back(kv.get<std::string>());
  return out;
}

void write_spec(const std::string& claim_dir, const std::string& spec) {
  std::string tmp = claim_dir + "/.spec", path = claim_dir + "/spec";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) refuse("the stub's spec " + tmp, errno);
  bool ok = write_all(fd, spec) && ::fchmod(fd, 0644) == 0;
  int err = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    err = ok ? errno : err;
    ::unlink(tmp.c_str());
    refuse("the stub's spec " + path, err);
  }
}

}  // namespace

void WarmBinds::bind(const LaunchPlan& plan, const WarmMember& member, const nlohmann::json& state) {
  tree_.mount(plan, member_tree_roots(plan, member.session_dir));
  write_spec(member_claim_dir(member.session_dir), member_spec(plan, member_env(state)));
}

void WarmBinds::go(const WarmMember& member) {
  std::string fifo = member_go_fifo(member.session_dir);
  UniqueFd fd(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));  // ENXIO: no reader
  if (!fd || ::write(fd.get(), "\n", 1) != 1)
    throw Error(ErrorKind::start_failed, "warm pool: the member's stub does not wait on " + fifo + ": " +
                                             std::strerror(errno) + "; nothing was started");
}

void WarmBinds::release() { tree_.release(); }

void WarmBinds::finish(const WarmMember& member, bool removed_here) {
  release();
  drop_member_session(member.runtime_dir, member.session);
  release_session_dir(member.own_dir);
  if (removed_here) ::unlink((pool_dir(member.runtime_dir) + "/" + member.id + ".claim").c_str());
}

WarmRename::WarmRename(const WarmMember* member, const LaunchPlan& plan) {
  if (!member) return;
  api_ = std::make_shared<PodmanApi>(plan.socket);
  thread_ = std::thread([this, id = member->id, name = plan.container_name] {
    std::int64_t t0 = steady_ms();
    try {
      api_->rename(id, name);
    } catch (const std::exception& e) {
      warning_ = std::string("the warm member keeps its pool name: ") + e.what();
    }
    ms_ = steady_ms() - t0;
    done_ = true;
  });
}

WarmRename::~WarmRename() {
  if (thread_.joinable()) thread_.join();
}

void WarmRename::join(SessionResult& result) {
  if (!thread_.joinable()) return;
  bool stopped = !done_;
  if (stopped) api_->stop();
  thread_.join();
  result.phase_ms.emplace_back("rename", ms_);  // stopped: the time until it was
  if (!warning_.empty() && !stopped) result.warnings.push_back(warning_);
}

}  // namespace asbx
