#include "launcher/kube/kube_fields.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/error.h"

namespace asbx::kube_fields {

bool dns_label(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

bool label_value(const std::string& s) {
  if (s.empty()) return true;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

std::string checked_name(const std::string& name) {
  if (!dns_label(name))
    throw Error(ErrorKind::usage, "kube: '" + name + "' is not a Kubernetes name (at most 63 lowercase letters, digits "
                                  "and '-'); use a shorter --id of lowercase letters, digits and '-'");
  return name;
}

std::string memory_quantity(std::int64_t bytes) {
  for (auto [shift, suffix] : {std::pair{30, "Gi"}, {20, "Mi"}, {10, "Ki"}})
    if (bytes % (std::int64_t{1} << shift) == 0) return std::to_string(bytes >> shift) + suffix;
  return std::to_string(bytes);
}

std::string cpu_quantity(double cpus) {
  std::int64_t milli = std::max<std::int64_t>(1, std::llround(cpus * 1000));
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

std::pair<std::int64_t, std::int64_t> uid_gid(const std::string& user) {
  auto colon = user.find(':');
  return {std::stoll(user.substr(0, colon)), std::stoll(user.substr(colon + 1))};
}

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string option_value(const Mount& m, const std::string& name) {
  for (const auto& o : m.options)
    if (o.rfind(name + "=", 0) == 0) return o.substr(name.size() + 1);
  return "";
}

json seccomp_profile(const LaunchPlan& plan) {
  if (plan.seccomp.digest.empty()) return {{"type", "RuntimeDefault"}};
  return {{"type", "Localhost"}, {"localhostProfile", "agent-sandbox/" + plan.seccomp.digest + ".json"}};
}

json container_security(const LaunchPlan& plan) {
  auto [uid, gid] = uid_gid(plan.user);
  return {{"runAsUser", uid},
          {"runAsGroup", gid},
          {"runAsNonRoot", true},
          {"allowPrivilegeEscalation", false},
          {"privileged", false},
          {"readOnlyRootFilesystem", true},
          {"capabilities", {{"drop", {"ALL"}}}},
          {"seccompProfile", seccomp_profile(plan)}};
}

json resources(const Limits& l) {
  // ephemeral-storage: the disk budget (the kubelet evicts the Pod past it; docs/KUBERNETES.md says what it counts).
  json amounts = {{"memory", memory_quantity(l.memory_bytes)}, {"cpu", cpu_quantity(l.cpus)},
                  {"ephemeral-storage", memory_quantity(l.disk_bytes)}};
  return {{"limits", amounts}, {"requests", amounts}};  // limits = requests: Guaranteed QoS
}

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

}  // namespace asbx::kube_fields
