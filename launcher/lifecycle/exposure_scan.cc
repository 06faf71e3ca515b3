#include "launcher/lifecycle/exposure_scan.h"

#include <fcntl.h>

#include "base/util.h"
#include "launcher/lifecycle/home.h"

namespace asbx {

namespace {

// The container's writable layer, as podman names it ("" when it cannot be read).
std::string upper_dir(SessionResult& r, PodmanApi& api) {
  nlohmann::json state;
  try {
    state = api.inspect(r.container_id);
  } catch (const Error& e) {
    r.warnings.push_back(std::string("the secret scan could not read the container's writable layer: ") + e.what());
  }
  return state.is_object() ? state.value("/GraphDriver/Data/UpperDir"_json_pointer, std::string()) : "";
}

void note_bounds(SessionResult& r, const ScanBudget& budget, const OutputScan& output) {
  if (budget.exhausted) r.warnings.push_back("the end-of-session secret scan stopped at its bound (200000 files, 2 GiB)");
  for (const auto& dir : budget.too_deep)
    r.warnings.push_back("the end-of-session secret scan did not search " + dir + ": deeper than its bound (" +
                         std::to_string(ScanBudget::kMaxDepth) + " directory levels)");
  if (output.exhausted()) r.warnings.push_back("the secret scan of the agent's output stopped at its bound (1 GiB)");
}

}  // namespace

void scan_for_exposure(SessionResult& r, const LaunchPlan& plan, PodmanApi& api, const ExposureSources& at,
                       const std::vector<std::string>& values) {
  if (values.empty()) return;
  r.exposure_scanned = true;
  ScanBudget budget;
  auto found = [&](std::vector<std::string> where) {
    r.credential_exposed.insert(r.credential_exposed.end(), where.begin(), where.end());
  };
  found(at.output.found());
  found(scan_tree(at.home_fd, kContainerHome, values, budget));
  for (const auto& [path, fd] : at.scratch) found(scan_tree(fd.get(), path, values, budget));
  for (const auto& m : plan.mounts) {
    if (m.type != "bind" || m.destination == kContainerHome) continue;  // a seat tmpfs HOME: scanned above
    UniqueFd dir(::open(m.source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    found(scan_tree(dir.get(), m.destination, values, budget));
  }
  std::string upper = upper_dir(r, api);
  if (!upper.empty()) {
    UniqueFd dir(::open(upper.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    found(scan_tree(dir.get(), "(container root)", values, budget));
  }
  for (const auto& [name, value] : plan.env)
    if (holds_any(value, values)) found({"env " + name});
  note_bounds(r, budget, at.output);
}

void note_credential_exposed(SessionResult& result) {
  if (result.credential_exposed.empty()) return;
  record_error(result, Error(ErrorKind::credential_exposed, "a real token value was found inside the container at the session's end: " +
                                                                join(result.credential_exposed, ", ") +
                                                                " (the host's login may have leaked; log in again on the seat)"));
}

void note_injection(SessionResult& result, const EgressWall& egress) {
  SecretBook::Counts c = egress.inject_counts();
  result.injected = c.injected;
  result.refreshes_answered = c.refreshes_answered;
  result.placeholder_elsewhere = c.placeholder_elsewhere;
}

}  // namespace asbx
