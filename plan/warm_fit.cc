#include "plan/warm_fit.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace asbx {
namespace {

struct Row {
  const char* why;
  std::function<bool(const LaunchPlan&)> refuses;
};

bool under_member_root(const LaunchPlan& p) {
  return std::any_of(p.git.member_roots.begin(), p.git.member_roots.end(),
                     [&](const std::string& r) { return p.git.common.path.rfind(r + "/", 0) == 0; });
}

// Each row: something a member fixed at create cannot be given at claim (yet).
const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {"a persistent session", [](const LaunchPlan& p) { return p.persist; }},
      {"a rootless seat", [](const LaunchPlan& p) { return p.rootless; }},
      {"gVisor isolation", [](const LaunchPlan& p) { return p.isolation.wall != "runc"; }},
      // A plain clone's gitdir is inside the workspace; a mirror is at its own host path, where a
      // member has a mount point only for the seat's git roots (mounts/git.h member_git_roots).
      {"a linked worktree whose mirror is under none of the git roots a member holds",
       [](const LaunchPlan& p) { return p.git.shape == "linked_worktree" && !under_member_root(p); }},
      {"a network other than none (the namespace is fixed at create)", [](const LaunchPlan& p) { return p.network != "none"; }},
      // --egress is the member's own empty namespace: its door is opened at claim, as after init; in
      // inject mode the wall writes the session CA into the tmpfs every member has (launcher/pool/member.h).
      // A command whose name has '=' is exec'd by sh after env(1) (launcher/pool/member.h), which sets
      // PWD; it unsets it, so only a PWD of the plan's own could differ from the cold path's.
      {"a command whose name has '=' with PWD in its environment", [](const LaunchPlan& p) {
         return !p.argv.empty() && p.argv[0].find('=') != std::string::npos &&
                std::any_of(p.env.begin(), p.env.end(), [](const auto& kv) { return kv.first == "PWD"; });
       }},
  };
  return table;
}

}  // namespace

bool profile_has_listener(const std::string& profile_text) {
  return profile_text.find("\"listenerPath\"") != std::string::npos;
}

WarmFit warm_fit(const LaunchPlan& plan, int pool_size, int pool_tty_size) {
  if (pool_size <= 0 && pool_tty_size <= 0) return {false, "the seat's pool is off (pool_size = 0)"};
  for (const auto& row : rows())
    if (row.refuses(plan)) return {false, std::string("the pool cannot carry ") + row.why + " yet"};
  // A terminal is fixed at create: a member is made with one or without, each kind its own count.
  if (plan.tty && pool_tty_size <= 0) return {false, "the seat keeps no member made with a terminal (pool_tty_size = 0)"};
  if (!plan.tty && pool_size <= 0) return {false, "the seat keeps members made with a terminal only (pool_size = 0)"};
  return {true, ""};
}

}  // namespace asbx
