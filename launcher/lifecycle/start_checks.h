#pragma once
// What is checked between init and start, from the container's root as the launcher made it
// (nothing of the agent has run yet), and from podman's create answer.
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "launcher/podman/container_root.h"
#include "base/plan.h"
#include "seccomp/sentry_log.h"

namespace asbx {

// PATH of the created container (the image's, unless the plan sets one).
std::string container_path_env(const nlohmann::json& state);

// A bind source swapped between validation and mount shows up as another device/inode.
void verify_mounts(const ContainerRoot& root, const LaunchPlan& plan);

// The command resolves and is executable inside, as the agent's user.
void check_command(const ContainerRoot& root, const nlohmann::json& state, const LaunchPlan& plan);

// Rootless podman on cgroup v1 drops every resource limit and says so only in a warning.
void check_limits_enforced(SessionResult& result, const LaunchPlan& plan);

// gVisor: the sandbox runs on the platform and network the plan says, as its boot told the sentry's
// log; else Error(isolation_unavailable) naming the service, what differs and the wrapper.
void check_sandbox_boot(const LaunchPlan& plan, const SentryBoot& boot);

}  // namespace asbx
