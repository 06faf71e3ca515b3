#include "launcher/pool/member.h"

#include <map>
#include <set>

#include "base/error.h"
#include "launcher/podman/pool_fit.h"
#include "launcher/podman/spec.h"
#include "launcher/pool/warm_tree.h"

namespace asbx {
namespace {

std::string quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What the claim mounts (launcher/pool/warm_tree.h): everything under a tree root — the workspace,
// its gitdir, a linked worktree's mirror — so the member has none of it.
std::set<std::string> claimed_destinations(const LaunchPlan& plan) {
  std::set<std::string> out;
  for (const auto& m : plan.mounts)
    for (const auto& root : member_tree_roots(plan, plan.session_dir))
      if (!warm_tree_path(m.destination, root.inside).empty()) out.insert(m.destination);
  return out;
}

nlohmann::json member_bind(const std::string& source, const std::string& destination, const std::string& propagation) {
  nlohmann::json options = {"rbind", "ro", "nosuid", "nodev", "noexec"};
  if (!propagation.empty()) options.push_back(propagation);
  return {{"type", "bind"}, {"source", source}, {"destination", destination}, {"options", options}};
}

}  // namespace

std::string member_ws_dir(const std::string& session_dir) { return session_dir + "/tmpfs/ws"; }
std::string member_claim_dir(const std::string& session_dir) { return session_dir + "/claim"; }
std::string member_go_fifo(const std::string& session_dir) { return member_claim_dir(session_dir) + "/go"; }

std::vector<TreeRoot> member_tree_roots(const LaunchPlan& plan, const std::string& session_dir) {
  std::vector<TreeRoot> out = {{kWorkspacesInside, member_ws_dir(session_dir)}};
  for (std::size_t k = 0; k < plan.git.member_roots.size(); ++k)
    out.push_back({plan.git.member_roots[k], session_dir + "/tmpfs/git-" + std::to_string(k)});
  return out;
}

nlohmann::json member_body(const LaunchPlan& plan) {
  nlohmann::json b = create_body(plan);
  std::string path = b.contains("env") ? b["env"].value("PATH", "") : "";
  // Started by the fill: it waits until the claim has bound and written everything (a line on the fifo).
  std::string claim = kClaimDirInside;
  b["command"] = {"/bin/sh", "-c", "read -r go < " + claim + "/go && exec /bin/sh " + claim + "/spec"};
  b["env"] = nlohmann::json::object();
  if (!path.empty()) b["env"]["PATH"] = path;
  b["work_dir"] = "/";
  std::set<std::string> claimed = claimed_destinations(plan);
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : b.value("mounts", nlohmann::json::array()))
    if (!m.is_object() || !claimed.count(m.value("destination", ""))) mounts.push_back(m);
  for (const auto& root : member_tree_roots(plan, plan.session_dir)) mounts.push_back(member_bind(root.seat_dir, root.inside, "rslave"));
  mounts.push_back(member_bind(member_claim_dir(plan.session_dir), kClaimDirInside, ""));
  b["mounts"] = mounts;
  return b;
}

std::string member_digest(const LaunchPlan& plan, const std::string& image_id) {
  nlohmann::json body = member_body(plan);
  body["image_id"] = image_id;
  return pool_fit_digest(body, plan.session_id);
}

std::string member_spec(const LaunchPlan& plan, const std::vector<std::string>& base_env) {
  nlohmann::json b = create_body(plan);
  std::vector<std::string> argv = b.value("command", std::vector<std::string>{});
  if (argv.empty()) throw Error(ErrorKind::internal, "warm pool: the plan has no command");
  std::map<std::string, std::string> env;
  for (const auto& kv : base_env) {
    auto eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  nlohmann::json plan_env = b.value("env", nlohmann::json::object());
  for (const auto& [name, value] : plan_env.items())
    if (value.is_string()) env[name] = value.get<std::string>();
  std::string spec = "cd " + quoted(b.value("work_dir", std::string("/"))) + " || exit 127\nexec /usr/bin/env -i --";
  for (const auto& [name, value] : env) spec += " " + quoted(name + "=" + value);
  // GNU env (options end at "--"): NAME=VALUE words up to the first without '=', the command. A
  // command whose name has '=' would be read as one more variable: sh execs it (its $0) instead,
  // without the PWD it exports (plan/warm_fit.cc sends a plan that sets PWD cold).
  if (argv[0].find('=') != std::string::npos) spec += " /bin/sh -c " + quoted("unset PWD; exec \"$0\" \"$@\"");
  for (const auto& word : argv) spec += " " + quoted(word);
  return spec + "\n";
}

}  // namespace asbx
