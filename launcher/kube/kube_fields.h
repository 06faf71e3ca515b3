// The Pod manifest's field renderers (launcher/kube/kube.h builds the manifest from them): names
// Kubernetes accepts, quantities, the containers' security context and resources. Pure.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/plan.h"

namespace asbx::kube_fields {

using json = nlohmann::ordered_json;

bool dns_label(const std::string& s);
bool label_value(const std::string& s);
// `name` when it is a DNS label; else Error(usage) naming it and the way out (a shorter --id).
std::string checked_name(const std::string& name);
std::string memory_quantity(std::int64_t bytes);  // 512Mi, 8Gi, or bytes
std::string cpu_quantity(double cpus);            // 2, 500m
std::pair<std::int64_t, std::int64_t> uid_gid(const std::string& user);  // "1000:1000"
std::string basename_of(const std::string& path);
std::string option_value(const Mount& m, const std::string& name);  // "size" of "size=64m", "" if none
// The project's profile (seccomp/table.h) as a Localhost profile under the kubelet's seccomp root,
// named by its digest: the node needs that file (docs/KUBERNETES.md).
json seccomp_profile(const LaunchPlan& plan);
json container_security(const LaunchPlan& plan);
json resources(const Limits& l);  // limits = requests (Guaranteed QoS), ephemeral-storage the disk budget
std::string joined(const std::vector<std::string>& items, const std::string& sep);

}  // namespace asbx::kube_fields
