// The warm pool's fit rule (plan/warm_fit.h): each row sends a session to the cold path with its reason.
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "plan/warm_fit.h"

using namespace asbx;

namespace {
LaunchPlan fitting() {
  LaunchPlan p;
  p.git.shape = "none";
  p.argv = {"true"};
  p.seccomp.text = R"({"defaultAction":"SCMP_ACT_ERRNO","syscalls":[]})";
  return p;
}
}  // namespace

TEST_CASE("warm_fit: a plain session fits a pool that is on; a pool of 0 is off") {
  CHECK(warm_fit(fitting(), 2, 0).warm);
  CHECK(warm_fit(fitting(), 2, 0).why.empty());
  WarmFit off = warm_fit(fitting(), 0, 0);
  CHECK_FALSE(off.warm);
  CHECK(off.why == "the seat's pool is off (pool_size = 0)");
}

TEST_CASE("warm_fit: a terminal session takes a member made with one; each kind has its own count") {
  LaunchPlan tty = fitting();
  tty.tty = true;
  CHECK(warm_fit(tty, 0, 1).warm);
  CHECK(warm_fit(tty, 2, 1).warm);
  WarmFit none = warm_fit(tty, 2, 0);
  CHECK_FALSE(none.warm);
  CHECK(none.why == "the seat keeps no member made with a terminal (pool_tty_size = 0)");
  WarmFit only = warm_fit(fitting(), 0, 2);
  CHECK_FALSE(only.warm);
  CHECK(only.why == "the seat keeps members made with a terminal only (pool_size = 0)");
  tty.persist = true;  // outlives its terminal: still cold, its own row first
  CHECK(warm_fit(tty, 2, 2).why == "the pool cannot carry a persistent session yet");
}

TEST_CASE("warm_fit: each row refuses with its reason") {
  struct Case {
    std::function<void(LaunchPlan&)> change;
    const char* why;
  };
  std::vector<Case> cases = {
      {[](LaunchPlan& p) { p.persist = true; }, "a persistent session"},
      {[](LaunchPlan& p) { p.rootless = true; }, "a rootless seat"},
      {[](LaunchPlan& p) { p.isolation.wall = "gvisor"; }, "gVisor isolation"},
      {[](LaunchPlan& p) { p.git.shape = "linked_worktree"; }, "a linked worktree whose mirror is under none of the git roots a member holds"},
      {[](LaunchPlan& p) {
         p.git.shape = "linked_worktree", p.git.common.path = "/srv/gitx/m/.git", p.git.member_roots = {"/srv/git"};
       }, "a linked worktree whose mirror is under none of the git roots a member holds"},
      {[](LaunchPlan& p) { p.network = "slirp4netns"; }, "a network other than none (the namespace is fixed at create)"},
      {[](LaunchPlan& p) { p.argv = {"./A=B"}, p.env.emplace_back("PWD", "/x"); }, "a command whose name has '=' with PWD in its environment"},
  };
  for (const auto& c : cases) {
    LaunchPlan p = fitting();
    c.change(p);
    WarmFit f = warm_fit(p, 4, 4);
    CHECK_FALSE(f.warm);
    CHECK(f.why == std::string("the pool cannot carry ") + c.why + " yet");
  }
}

TEST_CASE("warm_fit: the walls a member carries do not send a session cold") {
  LaunchPlan p = fitting();
  p.tripwire.network = true;  // armed between the claim and start, as between init and start
  p.seccomp.text = R"({"listenerPath":"/run/x/notify.sock"})";  // the keeper hands the listener over
  p.isolation.user_namespace = "range";  // the member's own range, the plan made again on it
  p.git.shape = "plain";                 // its gitdir is made beneath the workspace at claim (warm_tree.h)
  p.state.dir = "/tmp/state";            // collected through HOME's fd, staged at claim as at init
  p.egress.enabled = true;               // copy mode: the door opened at claim in the member's empty namespace
  CHECK(warm_fit(p, 4, 4).warm);
  p.argv = {"./A=B"};  // sh execs it after env(1), PWD unset (launcher/pool/member.h)
  CHECK(warm_fit(p, 4, 4).warm);
  p.egress.inject.emplace_back();  // inject mode: the session CA written into the tmpfs every member has
  CHECK(warm_fit(p, 4, 4).warm);
  p.git.shape = "linked_worktree";  // its mirror beneath a git root the member holds
  p.git.common.path = "/srv/git/m/.git";
  p.git.member_roots = {"/home/x", "/srv/git"};
  CHECK(warm_fit(p, 4, 4).warm);
}

TEST_CASE("warm_fit: the listener check reads the profile's key, not a word in it") {
  CHECK(profile_has_listener(R"({"listenerPath":"/a","syscalls":[]})"));
  CHECK_FALSE(profile_has_listener(R"({"comment":"no listenerPath here","syscalls":[]})"));
  CHECK_FALSE(profile_has_listener(""));
}
