// A warm pool member (docs/DECISIONS.md "Issue 37: the warm pool"): a container created, initialised
// and started ahead of any session, with nothing of a session in it. Its command is fixed at create,
// so it is a stub: the image's /bin/sh waits on the fifo CLAIM_DIR/go, then runs CLAIM_DIR/spec,
// which the claiming launcher writes (argv, environment, working dir) into a dir bound read-only
// before it opens the fifo, and execs the agent with exactly the environment a cold session's would
// have. Its /sandbox/workspaces is a small tmpfs of the seat's,
// bound `rslave`: the claim mounts the session's workspace on the seat side and it appears inside,
// never the other way round.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/plan.h"

namespace asbx {

inline constexpr const char* kClaimDirInside = "/sandbox/.claim";
inline constexpr const char* kWorkspacesInside = "/sandbox/workspaces";

// SESSION_DIR/tmpfs/ws (the shared tmpfs bound at /sandbox/workspaces) and SESSION_DIR/claim.
std::string member_ws_dir(const std::string& session_dir);
std::string member_claim_dir(const std::string& session_dir);
// SESSION_DIR/claim/go: the fifo the stub waits on (made by the fill, the agent's ids, 0600).
std::string member_go_fifo(const std::string& session_dir);

// Where the claim mounts a session's tree: each place inside (/sandbox/workspaces, then each of
// the plan's git.member_roots) with the member's shared seat tmpfs bound there
// (SESSION_DIR/tmpfs/ws, SESSION_DIR/tmpfs/git-K).
struct TreeRoot {
  std::string inside, seat_dir;
};
std::vector<TreeRoot> member_tree_roots(const LaunchPlan& plan, const std::string& session_dir);

// The create body of a member for PLAN's seat: create_body(plan) with the stub for a command, PATH
// for all its environment, "/" for its working dir, and every mount under a tree root (the
// workspace, its gitdir, a linked worktree's mirror) replaced by the member binds: each root's seat
// tmpfs, read-only and rslave, and the claim dir. (Inject mode's session CA tmpfs is in every plan
// on a seat that keeps a pool: plan/build_plan.cc.) A session's plan renders the same body but
// for its id, so the digest of both tells whether the member fits.
nlohmann::json member_body(const LaunchPlan& plan);

// pool_fit_digest of member_body(plan) with the session id and the range's host ids taken out, and
// IMAGE_ID (the image's id on the seat now: a tag rebuilt under the same name is another image).
std::string member_digest(const LaunchPlan& plan, const std::string& image_id);

// The spec the stub sources: `cd` to the plan's working dir, then `exec /usr/bin/env -i` with
// BASE (podman's own environment of the member, e.g. container=podman) overlaid by the plan's
// environment, then the plan's argv (through `/bin/sh -c 'unset PWD; exec "$0" "$@"'` when argv[0]
// has '=', which env would read as an assignment). Every word single-quoted. Throws Error(internal) for an
// empty argv.
std::string member_spec(const LaunchPlan& plan, const std::vector<std::string>& base_env);

}  // namespace asbx
