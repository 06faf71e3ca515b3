// The tripwire's policy: which decoys a session's HOME gets, which of their directories count
// as listed, what the network part needs from the create body, and the decoys' fake contents.
// Pure: the mechanism writes and watches them (launcher/wall/tripwire.h).
#pragma once
#include <string>
#include <vector>

#include "base/plan.h"
#include "base/tripwire_plan.h"

namespace asbx {

// The built-in list: paths that credential stealers read and that neither the runtimes nor
// ordinary builds (npm, pip, git without ssh) open (docs/DECISIONS.md says why each is in or out).
const std::vector<std::string>& default_canaries();

// "" for a usable HOME-relative path (letters, digits, '.', '_', '-' in at most 8 parts, no
// "." or ".." part, at most 255 characters), else why not. A leading "~/" is the caller's to strip.
std::string canary_path_problem(const std::string& path);

// The plan's tripwire from the seat's choice and the rest of the plan (network, user,
// credentials, state). Throws Error(config) naming `source` when a decoy would sit on a
// credential copy or a state path.
TripwirePlan plan_tripwire(const TripwireSeat& seat, const LaunchPlan& plan, const std::string& source);

// Unique fake contents for the decoy at `path`, shaped like what a stealer expects there and
// derived from the session's `mark` (random, recorded): never anyone's secret.
std::string canary_content(const std::string& path, const std::string& mark);

}  // namespace asbx
