// A session's claim of a warm pool member (docs/DECISIONS.md "Issue 37: the warm pool"). Among the
// ready members whose digest is the session's (launcher/pool/member.h), the first whose claim file
// this launcher links wins it (launcher/podman/pool_claim.h: one winner, whatever the concurrency).
// The winner then takes the member's seccomp listener from its keeper (pidfd_getfd; the socket's
// name is checked to be the member's) and kills the keeper. A member won but unusable is removed.
#pragma once
#include <future>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/beneath.h"
#include "base/plan.h"

namespace asbx {

// The start of `why_cold` when no member was ready at all (a refill is due).
inline constexpr const char* kNoReadyMember = "no ready member";

struct WarmMember {
  std::string id;
  std::string session;      // the member's own id: its session dir holds HOME, the ws tmpfs, the claim dir
  std::string session_dir;
  std::string runtime_dir;
  std::int64_t slot = -1;   // its user namespace range (-1: none)
  UniqueFd listener;        // the member's listening socket; runc's connection waits in it
  std::string own_dir;      // the session's own dir (its owner file): a second launcher of its id is refused
  std::int64_t claim_ms = 0;  // the claim's time (the record's "claim" phase)
  std::string resources;      // the member's limits as made (launcher/pool/warm_limits.h)
  // podman's inspect of it, asked the moment it was won, beside the listener's take and the image's
  // check (the session's "inspect" phase waits for what is left of it). get() rethrows its Error.
  std::shared_future<nlohmann::json> inspected;
  // A killed launcher's session was in sight before the claim took the session's dir, whose dead
  // owner's files the take clears: the launch waits for its gc (launcher/lifecycle/local.cc).
  bool orphan_in_sight = false;
};

// podman's answer to "which image is this name now", asked as soon as the seat config is read, so
// that it runs beside the session's planning instead of after it (docs/BENCHMARKS.md, stop 55).
// A claim uses it only when its socket and image are the plan's; get() rethrows its Error.
struct ImageQuestion {
  std::string socket, image;
  std::shared_future<std::string> id;
};
ImageQuestion ask_image_id(const std::string& socket, const std::string& image);

// nullopt with `why_cold` set when no member could be claimed. Throws Error(create_failed) when a
// live launcher holds the session's id (as the cold path's), Error(internal) on an OS error.
std::optional<WarmMember> take_member(const LaunchPlan& plan, const std::string& runtime_dir, const ImageQuestion& asked,
                                      std::string& why_cold);

// The session dir take_member held (its owner file, the dir when empty), after the session.
void release_session_dir(const std::string& own_dir);

}  // namespace asbx
