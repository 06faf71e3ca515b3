// A session as a Kubernetes manifest (`agent-sandbox kube`): the Pod the LaunchPlan describes,
// plus a NetworkPolicy when the session has no network. Built from the same plan as the libpod
// create body, so one change to containment changes both. Pure: reads no file, creates nothing.
// The mapping and the gaps: docs/KUBERNETES.md.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/plan.h"

namespace asbx {

// What a Pod cannot say: written into the Pod as an annotation (key → the plan's value) and
// into docs/KUBERNETES.md with the node-level setting that provides it.
struct KubeGap {
  const char* annotation;
  const char* what;
};
const std::vector<KubeGap>& kube_gaps();

// Throws Error(usage) when the session has no Pod form (a network mode a Pod cannot join, a
// session id or label value that is not a Kubernetes name).
std::vector<nlohmann::ordered_json> kube_manifest(const LaunchPlan& plan);
std::string kube_yaml(const LaunchPlan& plan);
// The Secret a credential is copied from: a reference, never its value.
std::string kube_secret_name(const LaunchPlan& plan, const StagedCredential& cred);

}  // namespace asbx
