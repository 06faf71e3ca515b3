// The warm pool's members as podman lists them, and their removal (docs/DECISIONS.md "Issue 37: the
// warm pool"). A member is a container labelled agent-sandbox.pool=DIGEST (launcher/pool/member.h)
// whose launcher labels name its keeper (launcher/pool/fill.h); once claimed, its claim file
// RUNTIME_DIR/.pool/ID.claim names the session's launcher instead (launcher/podman/pool_claim.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/plan.h"
#include "launcher/podman/podman_api.h"

namespace asbx {

inline constexpr const char* kPoolLabel = "agent-sandbox.pool";
inline constexpr const char* kPoolListenerLabel = "agent-sandbox.pool-listener-fd";
inline constexpr const char* kPoolSlotLabel = "agent-sandbox.pool-slot";
// The seat's runtime_dir the member was made for: its session dir and claim file are there, and only
// that seat's launchers list it (several seat configs may share one podman service).
inline constexpr const char* kPoolRuntimeLabel = "agent-sandbox.pool-runtime-dir";

struct Member {
  std::string id, session, digest, state;
  std::string image, boot_id;  // from its ready file (launcher/pool/ready.h); "" from podman's list
  std::string resources;       // its create body's resource_limits, as JSON text (ready file only)
  long init_pid = 0;           // runc's init process of the member (ready file only): gone = member gone
  std::int64_t init_started = 0;  // its start (pid reuse)
  long keeper_pid = 0;
  std::int64_t started_unix = 0;
  int listener_fd = -1;
  std::int64_t slot = -1;
  bool claimed = false;
  bool ready = false;  // unclaimed, running (its stub waits), this boot's, its keeper alive: a claim may take it
};

std::string pool_dir(const std::string& runtime_dir);

// The plan's agent-sandbox.started label (the launcher's or keeper's start); 0 when it has none.
std::int64_t plan_started_unix(const LaunchPlan& plan);

// The image's id on the seat (what a member's digest carries). Throws Error(image_missing).
std::string image_id(PodmanApi& api, const std::string& image);  // RUNTIME_DIR/.pool, made 0700 when missing

std::vector<Member> list_members(PodmanApi& api, const std::string& runtime_dir);

// Its keeper killed (when it is still that process), the container removed, its session dir and
// claim file gone. The line says so and why.
std::string discard_member(PodmanApi& api, const std::string& runtime_dir, const Member& m, const std::string& why);

// After a claimed member's container is gone: its session dir's mounts and files.
void drop_member_session(const std::string& runtime_dir, const std::string& session);

}  // namespace asbx
