// What a claim binds into a warm member before it starts (docs/DECISIONS.md "Issue 37: the warm
// pool"): the plan's tree under /sandbox/workspaces — the workspace and a plain clone's gitdir —
// made on the seat beneath MEMBER/tmpfs/ws (the shared tmpfs the member sees at /sandbox/workspaces;
// launcher/pool/warm_tree.h), and the stub's spec (launcher/pool/member.h) in the member's claim
// dir. verify_mounts checks each inode inside afterwards, as for a cold session. Released when the
// session ends.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/plan.h"
#include "base/result.h"
#include "launcher/podman/podman_api.h"
#include "launcher/pool/take.h"
#include "launcher/pool/warm_tree.h"

namespace asbx {

class WarmBinds {
 public:
  WarmBinds() = default;
  WarmBinds(const WarmBinds&) = delete;
  WarmBinds& operator=(const WarmBinds&) = delete;
  ~WarmBinds() { release(); }
  // STATE: the member's inspect (its Config.Env: what podman itself put there). Throws
  // Error(workspace_rejected) naming the bind or the spec that could not be made.
  void bind(const LaunchPlan& plan, const WarmMember& member, const nlohmann::json& state);
  // The agent's start: one line on the fifo the member's stub waits on (launcher/pool/member.h),
  // opened without blocking. Throws Error(start_failed) when no stub waits there (it has ended).
  void go(const WarmMember& member);
  void release();
  // After the session: release(), the member's session dir (HOME, the ws tmpfs), and its claim file
  // when the launcher removed the container itself (else gc drops it once the container is gone).
  void finish(const WarmMember& member, bool removed_here);

 private:
  WarmTree tree_;
};

// The member's name becomes the session's (podman ps, gc's lines) once the agent runs, on a thread
// of its own beside the agent: the claim file decided whose it is; the name is for people, so a
// failure is a warning. Nothing for a cold session (MEMBER null). join() adds the warning and the
// "rename" phase; the destructor joins too (a session that threw), so no thread outlives it. An
// agent that has ended before podman answered does not wait for it: join() stops the call (the
// name is for a container about to go; the "rename" phase is then the time until the stop).
class WarmRename {
 public:
  WarmRename(const WarmMember* member, const LaunchPlan& plan);
  ~WarmRename();
  WarmRename(const WarmRename&) = delete;
  WarmRename& operator=(const WarmRename&) = delete;
  void join(SessionResult& result);

 private:
  std::shared_ptr<PodmanApi> api_;
  std::atomic<bool> done_{false};
  std::thread thread_;
  std::string warning_;
  std::int64_t ms_ = 0;
};

}  // namespace asbx
