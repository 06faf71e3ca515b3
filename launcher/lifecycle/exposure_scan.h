#pragma once
// Inject mode's end-of-session scan: the real values must be nowhere the agent could reach
// (secret_scan.h): its output, its HOME, /tmp and /dev/shm, its writable layer, the binds,
// the environment it was given. Each place found is added to credential_exposed.
#include <string>
#include <vector>

#include "base/plan.h"
#include "base/result.h"
#include "launcher/lifecycle/secret_scan.h"
#include "launcher/podman/podman_api.h"
#include "launcher/wall/wall.h"

namespace asbx {

struct ExposureSources {
  const OutputScan& output;
  int home_fd;
  const ScratchPins& scratch;
};

void scan_for_exposure(SessionResult& result, const LaunchPlan& plan, PodmanApi& api, const ExposureSources& at,
                       const std::vector<std::string>& values);

// A real value found: the session fails (credential_exposed) naming where, whatever else it said.
void note_credential_exposed(SessionResult& result);

// Inject mode's counters from the wall (launcher/wall/wall.h) into the record.
void note_injection(SessionResult& result, const EgressWall& egress);

}  // namespace asbx
